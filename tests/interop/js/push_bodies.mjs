// Parse push-notification bodies as a receiver using @a2a-js/sdk would; print one JSON array.
//
//     node push_bodies.mjs {1.0,0.3} < BODIES_JSON_ARRAY
//
// v1.0 bodies are StreamResponse JSON (StreamResponse.fromJSON); v0.3 bodies go through the
// SDK's own receiver-side translator, legacyPushNotificationToV1StreamResponse (which checks
// the required identity fields). Each entry is {"ok": StreamResponse JSON} or {"error": ...}.

import { StreamResponse } from '@a2a-js/sdk';
import { legacyPushNotificationToV1StreamResponse } from '@a2a-js/sdk/compat/v0_3';
import { readFileSync } from 'node:fs';

const [version] = process.argv.slice(2);
const parse =
  version === '0.3'
    ? legacyPushNotificationToV1StreamResponse
    : (body) => StreamResponse.fromJSON(body);

const parsed = JSON.parse(readFileSync(0, 'utf8')).map((body) => {
  try {
    const event = parse(body);
    if (!event.payload) throw new Error('no payload');
    return { ok: StreamResponse.toJSON(event) };
  } catch (err) {
    return { error: { name: err?.name, message: String(err?.message ?? err) } };
  }
});
process.stdout.write(JSON.stringify(parsed) + '\n');
