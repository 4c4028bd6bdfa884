"""``python -m a2a_core``: the ``a2aserve`` command line (`a2a_core.cli`)."""

if __name__ == "__main__":  # importing this module (the purity check does) runs nothing
    from a2a_core.cli import main

    raise SystemExit(main())
