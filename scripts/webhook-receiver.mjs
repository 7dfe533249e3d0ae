// A local receiver for the gateway's notifications, to watch them arrive while trying the API:
//   SIGNING_SECRET=whsec_… PORT=4000 npm run webhook-receiver
// It checks the Standard Webhooks signature the gateway puts on every notification (the rule of the
// SDK's verifyWebhook, sdk/src/signatures.ts) and prints each verified body on one line. Node only,
// no dependency, so it runs from a fresh clone before anything is built.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const port = Number(process.env.PORT || 4000);
// Loopback only: the sandbox gateway posts from this machine, and nobody else needs to reach it.
const host = '127.0.0.1';
const secret = process.env.SIGNING_SECRET ?? '';
// Beyond this distance a captured notification could be replayed; the same bound as the SDK's.
const tolerance_seconds = 5 * 60;
// The gateway's notifications are a few kilobytes; a larger body is not one of them.
const max_body_bytes = 1024 * 1024;
// The gateway gives up on an attempt after 10 s and tries again later, so waiting longer serves nobody.
const request_timeout_ms = 10_000;

if (!secret.startsWith('whsec_') || Buffer.from(secret.slice(6), 'base64').length === 0) {
  console.error('SIGNING_SECRET must be a seller signing secret, whsec_… (GET /api/signing-secret)');
  process.exit(1);
}
const key = Buffer.from(secret.slice(6), 'base64');

class Refusal extends Error {}

/** A header sent more than once could carry a forged value beside a good one: refuse it. */
function single(req, name) {
  const values = req.headersDistinct[name];
  if (!values) throw new Refusal(`${name} is missing`);
  if (values.length > 1) throw new Refusal(`${name} was sent more than once`);
  return values[0].trim();
}

function verify(req, body) {
  const id = single(req, 'webhook-id');
  const timestamp = single(req, 'webhook-timestamp');
  const signatures = single(req, 'webhook-signature');
  if (!/^\d{1,15}$/.test(timestamp)) throw new Refusal('webhook-timestamp is not Unix seconds');
  const age = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (Math.abs(age) > tolerance_seconds) throw new Refusal(`webhook-timestamp is ${age} s away from now (more than ${tolerance_seconds})`);
  // The signature covers the bytes as received: re-serialising the JSON first would change them.
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
  // During the 24 h after a rotation two `v1,` entries are sent; either one may match. Every entry is
  // compared, each in constant time, so the time taken says nothing about which bytes were right.
  let matched = false;
  for (const entry of signatures.split(/ +/)) {
    if (!entry.startsWith('v1,')) continue;
    const given = Buffer.from(entry.slice(3), 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) throw new Refusal('no webhook-signature entry matches the body (wrong SIGNING_SECRET?)');
  try {
    return { id, payload: JSON.parse(body.toString('utf8')) };
  } catch {
    throw new Refusal('the body is not JSON');
  }
}

function answer(req, res, body) {
  try {
    const { id, payload } = verify(req, body);
    console.log(`verified ${id} ${JSON.stringify(payload)}`);
    res.writeHead(204).end();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    console.error(`refused: ${error.message}`);
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`${error.message}\n`);
  }
}

const server = createServer({ requestTimeout: request_timeout_ms, headersTimeout: 5_000, connectionsCheckingInterval: 1_000 }, (req, res) => {
  if (req.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end();
  const tooLarge = () => res.writeHead(413, { connection: 'close' }).end('body too large\n', () => req.destroy());
  if (Number(req.headers['content-length'] ?? 0) > max_body_bytes) return tooLarge();
  const chunks = [];
  let size = 0;
  // A sender that hangs up mid-body is its own problem; without this the error would end the process.
  req.on('error', () => {});
  req.on('data', (chunk) => {
    size += chunk.length;
    if (size <= max_body_bytes) return chunks.push(chunk);
    // A chunked body declares no length up front: stop at the bound, not at the end.
    req.removeAllListeners('data').removeAllListeners('end');
    tooLarge();
  });
  req.on('end', () => answer(req, res, Buffer.concat(chunks)));
});

server.listen(port, host, () => console.log(`webhook receiver on http://${host}:${server.address().port}/ (signature checked)`));
