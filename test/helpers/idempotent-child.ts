// A gateway process that sends one POST /api/sales with an Idempotency-Key and prints "sent"; the
// test that spawns it holds a lock the sale needs, so the request stays in flight until the test
// kills this process (the crash that must not leave the key held).
import { buildApp } from '../../src/app.ts';
import { createContext, loadSettings } from '../../src/runtime.ts';

const [headersJson, key, bodyJson] = process.argv.slice(2);
const ctx = await createContext(loadSettings(process.env));
const app = await buildApp(ctx);
await app.ready();
void app.inject({
  method: 'POST',
  url: '/api/sales',
  payload: JSON.parse(bodyJson!),
  headers: { ...JSON.parse(headersJson!), 'idempotency-key': key! },
});
console.log('sent');
