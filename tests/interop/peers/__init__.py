"""Official A2A servers (a2a-sdk 1.x, a2a-sdk 0.3.x, @a2a-js/sdk) as peers for our client."""
