import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'gw-config-'));

test('embedded defaults: every variable of CONTRACT §1 has its default', () => {
  const c = loadConfig({ DATA_DIR: tmp() });
  assert.equal(c.port, 3000);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.embedded, true);
  assert.equal(c.provider, 'sandbox');
  assert.equal(c.sandboxAutopilot, true);
  assert.equal(c.webhookAllowPrivate, true);
  assert.equal(c.pixMerchantName, 'GATEWAY SANDBOX');
  assert.equal(c.pixMerchantCity, 'SAO PAULO');
  assert.equal(c.boletoBankCode, '001');
  assert.equal(c.logLevel, 'info');
  assert.equal(c.rateLimitPerSecond, 100);
  assert.equal(c.authFailuresPerMinute, 20);
  assert.equal(c.httpRequestTimeoutMs, 30_000);
  assert.equal(c.httpMaxConnections, 1000);
  assert.match(c.pixReceiverKey, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

test('embedded mode generates secrets once, stores them 0600 and reuses them', () => {
  const dir = tmp();
  const first = loadConfig({ DATA_DIR: dir });
  const file = join(dir, 'secrets.json');
  assert.equal(first.secretsFile, file);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const stored = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(stored.adminToken, first.adminToken);
  assert.equal(stored.postbackSecret, first.postbackSecret);
  const second = loadConfig({ DATA_DIR: dir });
  assert.equal(second.adminToken, first.adminToken);
  assert.equal(second.postbackSecret, first.postbackSecret);
  assert.equal(second.pixReceiverKey, first.pixReceiverKey);
});

test('environment secrets win and are not written to disk', () => {
  const dir = tmp();
  const c = loadConfig({ DATA_DIR: dir, ADMIN_TOKEN: 'a'.repeat(32), POSTBACK_SECRET: 'b'.repeat(32), PIX_RECEIVER_KEY: 'k@example.com' });
  assert.equal(c.adminToken, 'a'.repeat(32));
  assert.equal(c.secretsFile, null);
});

test('PostgreSQL requires ADMIN_TOKEN and POSTBACK_SECRET', () => {
  const url = 'postgres://u@127.0.0.1/db';
  assert.throws(
    () => loadConfig({ DATABASE_URL: url, POSTBACK_SECRET: 'x'.repeat(32) }),
    (e: Error) => e instanceof ConfigError && e.message.startsWith('ADMIN_TOKEN'),
  );
  assert.throws(
    () => loadConfig({ DATABASE_URL: url, ADMIN_TOKEN: 'x'.repeat(32) }),
    (e: Error) => e.message.startsWith('POSTBACK_SECRET'),
  );
  const c = loadConfig({ DATABASE_URL: url, ADMIN_TOKEN: 'x'.repeat(32), POSTBACK_SECRET: 'y'.repeat(32) });
  assert.equal(c.embedded, false);
  assert.equal(c.webhookAllowPrivate, true);
});

test('a bad value names its variable in one line', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SANDBOX_AUTOPILOT: 'yes' }, 'SANDBOX_AUTOPILOT'],
    [{ WEBHOOK_ALLOW_PRIVATE: '1' }, 'WEBHOOK_ALLOW_PRIVATE'],
    [{ PROVIDER: 'stripe' }, 'PROVIDER'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ BOLETO_BANK_CODE: '12' }, 'BOLETO_BANK_CODE'],
    [{ PIX_MERCHANT_NAME: 'N'.repeat(26) }, 'PIX_MERCHANT_NAME'],
    [{ PIX_MERCHANT_CITY: 'C'.repeat(16) }, 'PIX_MERCHANT_CITY'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    [{ PIX_RECEIVER_KEY: 'k'.repeat(78) }, 'PIX_RECEIVER_KEY'],
    [{ RATE_LIMIT_PER_SECOND: '0' }, 'RATE_LIMIT_PER_SECOND'],
    [{ AUTH_FAILURES_PER_MINUTE: 'many' }, 'AUTH_FAILURES_PER_MINUTE'],
    [{ HTTP_REQUEST_TIMEOUT_MS: '0' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_MAX_CONNECTIONS: '0' }, 'HTTP_MAX_CONNECTIONS'],
  ];
  for (const [env, name] of cases) {
    assert.throws(
      () => loadConfig({ DATA_DIR: tmp(), ...env }),
      (e: Error) => {
        assert.ok(e instanceof ConfigError);
        assert.ok(e.message.startsWith(name), `${e.message} should name ${name}`);
        assert.ok(!e.message.includes('\n'));
        return true;
      },
    );
  }
});

test('ADMIN_TOKEN and POSTBACK_SECRET shorter than 32 characters are refused, in both modes', () => {
  const url = 'postgres://u@127.0.0.1/db';
  const long = 'z'.repeat(32);
  const cases: [Record<string, string>, string][] = [
    [{ DATA_DIR: tmp(), ADMIN_TOKEN: 'aaaaaaaaaaaaaaaa' }, 'ADMIN_TOKEN'],
    [{ DATA_DIR: tmp(), POSTBACK_SECRET: 'b'.repeat(31) }, 'POSTBACK_SECRET'],
    [{ DATABASE_URL: url, ADMIN_TOKEN: 'a'.repeat(31), POSTBACK_SECRET: long }, 'ADMIN_TOKEN'],
    [{ DATABASE_URL: url, ADMIN_TOKEN: long, POSTBACK_SECRET: 'b'.repeat(16) }, 'POSTBACK_SECRET'],
  ];
  for (const [env, name] of cases) {
    assert.throws(
      () => loadConfig(env),
      (e: Error) => e instanceof ConfigError && e.message === `${name} must be at least 32 characters`,
    );
  }
  assert.equal(loadConfig({ DATABASE_URL: url, ADMIN_TOKEN: long, POSTBACK_SECRET: long }).adminToken, long);
});

test('generated embedded secrets meet the 32-character minimum', () => {
  for (let i = 0; i < 20; i++) {
    const c = loadConfig({ DATA_DIR: tmp() });
    assert.ok(c.adminToken.length >= 32, c.adminToken);
    assert.ok(c.postbackSecret.length >= 32, c.postbackSecret);
  }
});

test('rate limits and HTTP limits come from the environment', () => {
  const c = loadConfig({
    DATA_DIR: tmp(),
    RATE_LIMIT_PER_SECOND: '5',
    AUTH_FAILURES_PER_MINUTE: '3',
    HTTP_REQUEST_TIMEOUT_MS: '1500',
    HTTP_MAX_CONNECTIONS: '7',
  });
  assert.deepEqual([c.rateLimitPerSecond, c.authFailuresPerMinute, c.httpRequestTimeoutMs, c.httpMaxConnections], [5, 3, 1500, 7]);
});
