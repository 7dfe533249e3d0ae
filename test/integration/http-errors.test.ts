import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { adminHeaders, type Gateway, startGateway } from '../helpers/gateway.ts';

/** A log destination that keeps what is written, and what it kept so far. */
function logCapture() {
  const capture = {
    text: '',
    stream: new Writable({
      write(chunk, _enc, done) {
        capture.text += chunk.toString();
        done();
      },
    }),
  };
  return capture;
}

describe('one error handler for every failure', () => {
  let gw: Gateway;
  const captured = logCapture();
  before(async () => {
    gw = await startGateway({
      env: { LOG_LEVEL: 'info' },
      logStream: captured.stream,
      extend: (app) => {
        app.get('/boom', async () => {
          throw new Error('SELECT secret_column FROM hidden_table');
        });
      },
    });
  });
  after(async () => {
    await gw.close();
  });

  const post = (payload: string, contentType = 'application/json') =>
    gw.app.inject({ method: 'POST', url: '/admin/sellers', headers: { ...adminHeaders, 'content-type': contentType }, payload });

  test('malformed JSON is 400 VALIDATION_ERROR naming the body, without echoing it', async () => {
    const res = await post('{"name": "x",');
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), {
      message: 'Invalid body: is not valid JSON',
      errorType: 'VALIDATION_ERROR',
      details: [{ field: 'body', message: 'is not valid JSON' }],
    });
  });

  test('a body over 1 MiB is 413', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024), email: 'a@b.co' }));
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().error, 'Payload Too Large');
  });

  test('a wrong content type is 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await post('name=x', type);
      assert.equal(res.statusCode, 415, type);
      assert.equal(res.json().error, 'Unsupported Media Type');
    }
  });

  test('an empty JSON body is 400', async () => {
    const res = await post('');
    assert.equal(res.statusCode, 400);
  });

  test('an unknown route is a JSON 404', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/nope?x=1' });
    assert.equal(res.statusCode, 404);
    assert.match(res.headers['content-type'] as string, /application\/json/);
    assert.deepEqual(res.json(), { error: 'Not Found', message: 'Route GET /nope not found' });
  });

  test('an unexpected failure is 500 with a request id and no internals', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/boom' });
    assert.equal(res.statusCode, 500);
    const body = res.json();
    assert.equal(body.error, 'Internal Server Error');
    assert.equal(typeof body.requestId, 'string');
    assert.equal(res.headers['x-request-id'], body.requestId);
    assert.ok(!res.body.includes('secret_column') && !res.body.includes('hidden_table') && !res.body.includes('at '), res.body);
    // The log keeps the detail, tied to the same request id.
    assert.ok(
      captured.text.includes(body.requestId) && captured.text.includes('hidden_table'),
      `the log holds request id ${body.requestId} and the error's detail`,
    );
  });

  test('keys and tokens never reach the logs', async () => {
    const seller = await gw.createSeller();
    await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
    await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: { ...seller.headers, 'x-api-private-key': 'sk_wrong' } });
    assert.ok(captured.text.length > 0, 'the requests were logged');
    assert.ok(!captured.text.includes(seller.privateKey), 'the private key never reaches the logs');
    assert.ok(!captured.text.includes('test-admin-token-0123456789abcdef'), 'the operator token never reaches the logs');
  });

  test('a request is one line at info: method, route, status, time and its request id', async () => {
    const seller = await gw.createSeller();
    const before = captured.text.length;
    const res = await gw.app.inject({ method: 'GET', url: '/api/transactions/12345', headers: seller.headers });
    const lines = captured.text
      .slice(before)
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 1, captured.text.slice(before));
    const [line] = lines;
    assert.deepEqual(
      [line!.level, line!.msg, line!.method, line!.route, line!.status, line!.reqId],
      [30, 'request', 'GET', '/api/transactions/:id', 404, res.headers['x-request-id']],
    );
    assert.equal(typeof line!.ms, 'number');
  });
});

describe('the request line follows LOG_LEVEL', () => {
  test('at warn a request writes no line; an error is still logged, its request redacted', async () => {
    const captured = logCapture();
    const gw = await startGateway({
      env: { LOG_LEVEL: 'warn' },
      logStream: captured.stream,
      extend: (app) => {
        app.get('/boom', async () => {
          throw new Error('boom');
        });
      },
    });
    try {
      const seller = await gw.createSeller();
      const ok = await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers });
      assert.equal(ok.statusCode, 200);
      assert.equal(captured.text, '', 'no line for a request at warn');
      const boom = await gw.app.inject({ method: 'GET', url: '/boom', headers: { 'x-api-private-key': seller.privateKey } });
      assert.equal(boom.statusCode, 500);
      const lines = captured.text
        .split('\n')
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as { level: number; msg: string });
      assert.ok(lines.length >= 1 && lines.every((l) => l.level >= 40 && l.msg !== 'request'), captured.text);
      assert.ok(captured.text.includes(boom.json().requestId), 'the error line names the request');
      assert.ok(!captured.text.includes(seller.privateKey), 'the key in the failed request is redacted');
    } finally {
      await gw.close();
    }
  });
});
