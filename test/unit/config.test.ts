import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { buildBrCode } from '../../src/domain/pix-brcode.ts';
import { loadSettings } from '../../src/runtime.ts';

const tmp = () => mkdtempSync(join(tmpdir(), 'gw-config-'));

test('embedded defaults: every variable of CONTRACT §1 has its default', () => {
  const c = loadConfig({ DATA_DIR: tmp() });
  assert.equal(c.port, 3000);
  assert.equal(c.host, '127.0.0.1');
  assert.equal(c.publicBaseUrl, 'http://127.0.0.1:3000');
  assert.equal(c.databaseUrl, undefined);
  assert.equal(c.embedded, true);
  assert.equal(c.trustProxy, false);
  assert.equal(c.sandboxAutopilot, true);
  assert.equal(c.webhookAllowPrivate, true);
  assert.equal(c.pixMerchantName, 'GATEWAY SANDBOX');
  assert.equal(c.pixMerchantCity, 'SAO PAULO');
  assert.equal(c.boletoBankCode, '001');
  assert.equal(c.logLevel, 'info');
  assert.equal(c.rateLimitPerSecond, 100);
  assert.equal(c.authFailuresPerMinute, 20);
  assert.equal(c.httpRequestTimeoutMs, 30_000);
  assert.equal(c.httpIdleTimeoutMs, 900_000);
  assert.equal(c.httpMaxConnections, 1000);
  assert.equal(c.shutdownTimeoutMs, 25_000);
  assert.match(c.pixReceiverKey ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
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
  assert.equal(c.pixReceiverKey, null, 'made once in the database when the gateway starts, not per process');
  assert.equal(c.webhookAllowPrivate, true);
});

test('a bad value names its variable in one line', () => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SANDBOX_AUTOPILOT: 'yes' }, 'SANDBOX_AUTOPILOT'],
    [{ WEBHOOK_ALLOW_PRIVATE: '1' }, 'WEBHOOK_ALLOW_PRIVATE'],
    [{ PROVIDER: 'stripe' }, 'PROVIDER'],
    [{ PROVIDER: 'sandbox' }, 'PROVIDER'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '127.0.0.1,proxy.example' }, 'TRUST_PROXY'],
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
    [{ HTTP_IDLE_TIMEOUT_MS: '999' }, 'HTTP_IDLE_TIMEOUT_MS'],
    [{ HTTP_MAX_CONNECTIONS: '0' }, 'HTTP_MAX_CONNECTIONS'],
    [{ SHUTDOWN_TIMEOUT_MS: 'soon' }, 'SHUTDOWN_TIMEOUT_MS'],
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

test('the private-address guard is on as soon as one rail is real; an explicit WEBHOOK_ALLOW_PRIVATE wins', () => {
  const adyen = {
    CARD_PROVIDER: 'adyen',
    ADYEN_API_KEY: 'k',
    ADYEN_MERCHANT_ACCOUNT: 'M',
    ADYEN_CHECKOUT_URL: 'https://checkout-test.adyen.com/v71',
    ADYEN_HMAC_KEY: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
    ADYEN_NOTIFICATION_USERNAME: 'u',
    ADYEN_NOTIFICATION_PASSWORD: 'p'.repeat(16),
  };
  const settings = (env: Record<string, string>) => loadSettings({ DATA_DIR: tmp(), ...env });
  const all = settings({});
  assert.deepEqual(
    [all.pixRail.provider, all.cardRail.provider, all.payoutRail.provider, all.boletoRail.provider],
    ['sandbox', 'sandbox', 'sandbox', 'sandbox'],
  );
  assert.equal(all.webhookAllowPrivate, true, 'every rail sandbox: private addresses allowed');
  assert.equal(settings(adyen).webhookAllowPrivate, false, 'CARD_PROVIDER=adyen: refused');
  assert.equal(settings({ ...adyen, WEBHOOK_ALLOW_PRIVATE: 'true' }).webhookAllowPrivate, true);
  assert.equal(settings({ WEBHOOK_ALLOW_PRIVATE: 'false' }).webhookAllowPrivate, false);
  assert.equal(loadConfig({ DATA_DIR: tmp(), PIX_PROVIDER: 'api-pix' }).webhookAllowPrivate, false);
  assert.throws(
    () => settings({ PAYOUT_PROVIDER: 'paypal' }),
    (e: Error) => e instanceof ConfigError && e.message.startsWith('PAYOUT_PROVIDER'),
  );
  // Efí posts every payout's outcome to the gateway: without a public address it cannot run.
  assert.throws(
    () => settings({ PAYOUT_PROVIDER: 'efi' }),
    (e: Error) => e instanceof ConfigError && e.message.startsWith('PIX_WEBHOOK_BASE_URL'),
  );
});

test('TRUST_PROXY: off by default; true; or a list of addresses and ranges', () => {
  const trust = (v: string) => loadConfig({ DATA_DIR: tmp(), TRUST_PROXY: v }).trustProxy;
  assert.equal(trust('false'), false);
  assert.equal(trust('true'), true);
  assert.deepEqual(trust('127.0.0.1, 10.0.0.0/8,::1'), ['127.0.0.1', '10.0.0.0/8', '::1']);
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
    HTTP_IDLE_TIMEOUT_MS: '60000',
    HTTP_MAX_CONNECTIONS: '7',
  });
  assert.deepEqual(
    [c.rateLimitPerSecond, c.authFailuresPerMinute, c.httpRequestTimeoutMs, c.httpIdleTimeoutMs, c.httpMaxConnections],
    [5, 3, 1500, 60_000, 7],
  );
});

// PostgreSQL mode writes nothing to disk: the property tests run it many times.
const postgres = { DATABASE_URL: 'postgres://u@127.0.0.1/db', ADMIN_TOKEN: 'x'.repeat(32), POSTBACK_SECRET: 'y'.repeat(32) };

/** loadConfig must refuse `env` with one line that starts with `name` (and includes `includes`). */
function refused(env: Record<string, string>, name: string, includes?: string): void {
  assert.throws(
    () => loadConfig({ DATA_DIR: tmp(), ...env }),
    (e: Error) => {
      assert.ok(e instanceof ConfigError, `${JSON.stringify(env)}: ${e.message}`);
      assert.ok(e.message.startsWith(`${name} `), `${e.message} should name ${name}`);
      assert.ok(!e.message.includes('\n'), e.message);
      if (includes) assert.ok(e.message.includes(includes), `${e.message} should include ${includes}`);
      return true;
    },
    JSON.stringify(env),
  );
}

/** A BR Code built from what the configuration accepted; pix-utils must read it. */
function brCodeOf(c: { pixReceiverKey: string | null; pixMerchantName: string; pixMerchantCity: string }) {
  assert.ok(c.pixReceiverKey !== null, 'embedded mode has its key at once');
  const code = buildBrCode({
    key: c.pixReceiverKey,
    merchantName: c.pixMerchantName,
    merchantCity: c.pixMerchantCity,
    amountCents: 15000,
    txid: 'ABC123',
  });
  const parsed = parsePix(code);
  if (hasError(parsed) || !isStaticPix(parsed)) return assert.fail(`pix-utils rejects ${code}`);
  return parsed;
}

test('PIX_RECEIVER_KEY: a key that is no valid PIX key stops start-up', () => {
  refused({ PIX_RECEIVER_KEY: 'not-a-pix-key' }, 'PIX_RECEIVER_KEY', 'must be a PIX key');
  refused({ PIX_RECEIVER_KEY: '52998224724' }, 'PIX_RECEIVER_KEY', 'not a valid CPF key: its check digits');
  refused({ PIX_RECEIVER_KEY: '11111111111' }, 'PIX_RECEIVER_KEY', 'CPF');
  refused({ PIX_RECEIVER_KEY: '11987654321' }, 'PIX_RECEIVER_KEY', 'a phone key is written +55');
  refused({ PIX_RECEIVER_KEY: '11222333000182' }, 'PIX_RECEIVER_KEY', 'not a valid CNPJ key');
  refused({ PIX_RECEIVER_KEY: 'fulano@example' }, 'PIX_RECEIVER_KEY', 'not a valid EMAIL key');
  refused({ PIX_RECEIVER_KEY: 'fulano@@example.com' }, 'PIX_RECEIVER_KEY', 'EMAIL');
  refused({ PIX_RECEIVER_KEY: '+5520987654321' }, 'PIX_RECEIVER_KEY', 'area code (DDD) 20 does not exist');
  refused({ PIX_RECEIVER_KEY: '+5511887654321' }, 'PIX_RECEIVER_KEY', 'starts with 9');
  refused({ PIX_RECEIVER_KEY: '+14155552671' }, 'PIX_RECEIVER_KEY', 'PHONE');
  refused({ PIX_RECEIVER_KEY: '123e4567-e12b-12d1-a456-42665544000' }, 'PIX_RECEIVER_KEY', 'must be a PIX key');
  refused({ PIX_RECEIVER_KEY: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz' }, 'PIX_RECEIVER_KEY', 'must be a PIX key');
  refused({ PIX_RECEIVER_KEY: `${'a'.repeat(70)}@example.com` }, 'PIX_RECEIVER_KEY', 'at most 77');
  // PostgreSQL mode checks it the same way.
  refused({ ...postgres, PIX_RECEIVER_KEY: 'not-a-pix-key' }, 'PIX_RECEIVER_KEY');
});

test("PIX_RECEIVER_KEY: a valid key not in the DICT's canonical form is refused, naming the form to use", () => {
  const cases: [string, string][] = [
    ['FULANO@EXAMPLE.COM', 'fulano@example.com'],
    ['Fulano@Example.com', 'fulano@example.com'],
    ['123E4567-E12B-12D1-A456-426655440000', '123e4567-e12b-12d1-a456-426655440000'],
    ['529.982.247-25', '52998224725'],
    ['11.222.333/0001-81', '11222333000181'],
    ['12.abc.345/01de-35', '12ABC34501DE35'],
    ['+55 (11) 98765-4321', '+5511987654321'],
  ];
  for (const [raw, canonical] of cases) refused({ PIX_RECEIVER_KEY: raw }, 'PIX_RECEIVER_KEY', `"${canonical}"`);
});

test('PIX_RECEIVER_KEY: canonical keys of every type start, and go into a BR Code unchanged', () => {
  for (const key of [
    '52998224725',
    '11222333000181',
    '12ABC34501DE35',
    'fulano@example.com',
    '+5511987654321',
    '+551133334444',
    '+5596991234567',
    '123e4567-e12b-12d1-a456-426655440000', // the test gateway's key: BCB's example, not a version-4 UUID
    '9d36b84f-c70b-478f-b95c-12729b90ca25',
    `${'a'.repeat(65)}@example.com`,
  ]) {
    const c = loadConfig({ DATA_DIR: tmp(), PIX_RECEIVER_KEY: key });
    assert.equal(c.pixReceiverKey, key);
    assert.equal(brCodeOf(c).pixKey, key);
  }
});

test('PIX_RECEIVER_KEY: the generated embedded key passes, and a bad one kept in secrets.json is named', () => {
  for (let i = 0; i < 20; i++) {
    const c = loadConfig({ DATA_DIR: tmp() });
    assert.equal(brCodeOf(c).pixKey, c.pixReceiverKey);
  }
  const dir = tmp();
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ pixReceiverKey: 'not-a-pix-key' }));
  assert.throws(
    () => loadConfig({ DATA_DIR: dir }),
    (e: Error) => e instanceof ConfigError && e.message.startsWith(`PIX_RECEIVER_KEY (kept in ${join(dir, 'secrets.json')}) must be a PIX key`),
  );
  writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ pixReceiverKey: 42 }));
  assert.throws(
    () => loadConfig({ DATA_DIR: dir }),
    (e: Error) => e instanceof ConfigError && e.message.startsWith('PIX_RECEIVER_KEY'),
  );
  // The environment wins over the file.
  assert.equal(loadConfig({ DATA_DIR: dir, PIX_RECEIVER_KEY: '52998224725' }).pixReceiverKey, '52998224725');
});

test('PIX_MERCHANT_NAME and PIX_MERCHANT_CITY: refused when the BR Code could not carry them', () => {
  refused({ PIX_MERCHANT_NAME: '!!! ***' }, 'PIX_MERCHANT_NAME', 'no letter or digit');
  refused({ PIX_MERCHANT_NAME: '北京' }, 'PIX_MERCHANT_NAME', 'no letter or digit');
  refused({ PIX_MERCHANT_NAME: '---' }, 'PIX_MERCHANT_NAME');
  refused({ PIX_MERCHANT_CITY: '!!! ***' }, 'PIX_MERCHANT_CITY', 'no letter or digit');
  refused({ PIX_MERCHANT_CITY: '🙂' }, 'PIX_MERCHANT_CITY');
  refused({ PIX_MERCHANT_NAME: 'Padaria Pão de Açúcar Ltda ME' }, 'PIX_MERCHANT_NAME', 'at most 25');
  refused({ PIX_MERCHANT_CITY: 'São João del-Rei' }, 'PIX_MERCHANT_CITY', '"SAO JOAO DEL REI" is 16');
});

test('PIX_MERCHANT_NAME and PIX_MERCHANT_CITY: accents and punctuation are fine, written as the BR Code writes them', () => {
  const c = loadConfig({ DATA_DIR: tmp(), PIX_MERCHANT_NAME: 'José & Filhos (Centro)', PIX_MERCHANT_CITY: 'Florianópolis' });
  assert.equal(c.pixMerchantName, 'José & Filhos (Centro)');
  const parsed = brCodeOf(c);
  assert.equal(parsed.merchantName, 'JOSE FILHOS CENTRO');
  assert.equal(parsed.merchantCity, 'FLORIANOPOLIS');
  // Length is the field's, once written: 25 and 15 characters fit exactly.
  assert.ok(loadConfig({ DATA_DIR: tmp(), PIX_MERCHANT_NAME: 'N'.repeat(25), PIX_MERCHANT_CITY: 'C'.repeat(15) }));
  assert.ok(loadConfig({ DATA_DIR: tmp(), PIX_MERCHANT_NAME: 'Café -- Cia. -- Ltda. ---- ME' }));
});

test('PIX_MERCHANT_NAME and PIX_MERCHANT_CITY: whatever start-up accepts, the builder builds (property)', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.constantFrom('!!! ***', ' - ', 'ÇÃO', '北京 Café'),
  );
  fc.assert(
    fc.property(text, text, (name, city) => {
      let c: ReturnType<typeof loadConfig>;
      try {
        c = loadConfig({ ...postgres, PIX_RECEIVER_KEY: 'k@example.com', PIX_MERCHANT_NAME: name, PIX_MERCHANT_CITY: city });
      } catch (e) {
        assert.ok(e instanceof ConfigError && /^PIX_MERCHANT_(NAME|CITY) /.test(e.message), String(e));
        return;
      }
      brCodeOf(c);
    }),
    { numRuns: 300 },
  );
});

test('PUBLIC_BASE_URL: where this process listens by default; an http(s) URL kept without its trailing slash; anything else named', () => {
  const dir = tmp();
  assert.equal(loadConfig({ DATA_DIR: dir, HOST: '::1', PORT: '8080' }).publicBaseUrl, 'http://[::1]:8080');
  assert.equal(loadConfig({ DATA_DIR: dir, PUBLIC_BASE_URL: 'https://pay.example.com/' }).publicBaseUrl, 'https://pay.example.com');
  assert.equal(loadConfig({ DATA_DIR: dir, PUBLIC_BASE_URL: 'https://example.com/gateway' }).publicBaseUrl, 'https://example.com/gateway');
  for (const bad of ['pay.example.com', 'ftp://pay.example.com', 'https://pay.example.com/?a=1', 'https://user:pw@pay.example.com'])
    assert.throws(
      () => loadConfig({ DATA_DIR: dir, PUBLIC_BASE_URL: bad }),
      (e: Error) => e instanceof ConfigError && /PUBLIC_BASE_URL/.test(e.message),
      bad,
    );
});

test('PIX_MED_SOURCE: the embedded PSP reads infractions by default, a real API Pix PSP devoluções only; MED_POLL_SECONDS 300', () => {
  const dir = tmp();
  const sandbox = loadSettings({ DATA_DIR: dir }).pixRail;
  assert.deepEqual([sandbox.medSource, sandbox.medPollSeconds], ['efi', 300]);
  const chosen = loadSettings({ DATA_DIR: dir, PIX_MED_SOURCE: 'devolucoes', MED_POLL_SECONDS: '60' }).pixRail;
  assert.deepEqual([chosen.medSource, chosen.medPollSeconds], ['devolucoes', 60]);
  for (const [name, value] of [
    ['PIX_MED_SOURCE', 'infracoes'],
    ['MED_POLL_SECONDS', '2'],
  ] as const)
    assert.throws(
      () => loadSettings({ DATA_DIR: dir, [name]: value }),
      (e: Error) => e instanceof ConfigError && e.message.includes(name),
      `${name}=${value}`,
    );
});
