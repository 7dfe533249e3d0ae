// The PIX settings end to end: what start-up accepts every PIX sale can carry, what it refuses stops
// `npm start` with one line, and cashout PHONE keys must be numbers that can exist in Brazil.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import { type Json, pixExample } from '../helpers/fixtures.ts';
import { fund } from '../helpers/funding.ts';
import { type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

/** Runs `src/main.ts` as `npm start` does, with `env` over a bare embedded set-up; answers how it ended. */
function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: 'memory://', DATA_DIR: mkdtempSync(join(tmpdir(), 'gw-pix-config-')), PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => {
    stdout += b;
  });
  child.stderr.on('data', (b) => {
    stderr += b;
  });
  // A gateway that starts listening did not refuse the setting: stop it, the test then fails on the exit code.
  // A bound on a hung start only: three at once, each compiling TypeScript, took over 30 s on a loaded 2-core machine.
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  child.stdout.on('data', () => {
    if (stdout.includes('listening')) child.kill('SIGTERM');
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

test('npm start refuses a bad PIX setting with one line naming the variable', async () => {
  const cases: [Record<string, string>, string][] = [
    [{ PIX_RECEIVER_KEY: 'not-a-pix-key' }, 'PIX_RECEIVER_KEY must be a PIX key'],
    [{ PIX_RECEIVER_KEY: 'FULANO@EXAMPLE.COM' }, 'PIX_RECEIVER_KEY must be the EMAIL key as the DICT writes it: "fulano@example.com"'],
    [{ PIX_MERCHANT_NAME: '!!! ***' }, 'PIX_MERCHANT_NAME has no letter or digit'],
  ];
  const runs = await Promise.all(cases.map(([env]) => start(env)));
  runs.forEach((run, i) => {
    const [env, line] = cases[i]!;
    assert.equal(run.code, 1, `${JSON.stringify(env)}: ${run.stdout} ${run.stderr}`);
    assert.ok(!run.stdout.includes('listening'), run.stdout);
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.ok(lines[0]!.startsWith(`configuration error: ${line}`), lines[0]);
  });
});

describe('a gateway with a phone receiver key and an accented merchant', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  before(async () => {
    gw = await startGateway({
      env: { PIX_RECEIVER_KEY: '+5511987654321', PIX_MERCHANT_NAME: 'Padaria São João & Cia', PIX_MERCHANT_CITY: 'Florianópolis' },
    });
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw.close();
  });

  test('a PIX sale carries the key, name and city in a BR Code pix-utils reads (static, and the PSP’s dynamic one)', async () => {
    const code = async (pix: Json) => {
      const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixExample({ pix }) });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().sale.payment.pix.key as string;
    };
    const fixed = await code({ expiresInSeconds: null });
    const parsed = parsePix(fixed);
    if (hasError(parsed) || !isStaticPix(parsed)) return assert.fail(`pix-utils rejects ${fixed}`);
    assert.deepEqual([parsed.pixKey, parsed.merchantName, parsed.merchantCity], ['+5511987654321', 'PADARIA SAO JOAO CIA', 'FLORIANOPOLIS']);
    const expiring = await code({ expiresInSeconds: 600 });
    const dynamic = parsePix(expiring);
    if (hasError(dynamic) || !isDynamicPix(dynamic)) return assert.fail(`pix-utils reads no dynamic PIX in ${expiring}`);
    assert.deepEqual([dynamic.merchantName, dynamic.merchantCity], ['PADARIA SAO JOAO CIA', 'FLORIANOPOLIS']);
  });

  test('cashout PHONE keys: an area code that does not exist, or a mobile not starting with 9, is 400 INVALID_PIX_KEY', async () => {
    await fund(gw, seller.id, 1_000_000);
    const cashout = (pixKey: string) =>
      gw.app.inject({ method: 'POST', url: '/api/public/cashout', headers: seller.headers, payload: { amount: 100, pixKey, pixKeyType: 'PHONE' } });
    const cases: [string, RegExp][] = [
      ['+5520987654321', /area code \(DDD\) 20 does not exist/],
      ['+5523987654321', /area code \(DDD\) 23 does not exist/],
      ['+5530987654321', /area code \(DDD\) 30 does not exist/],
      ['+5511887654321', /9-digit \(mobile\) number starts with 9/],
      ['+551163334444', /8-digit \(landline\) number starts with 2, 3, 4 or 5/],
    ];
    for (const [key, message] of cases) {
      const res = await cashout(key);
      assert.equal(res.statusCode, 400, `${key}: ${res.body}`);
      assert.equal(res.json().errorType, 'INVALID_PIX_KEY', res.body);
      assert.match(res.json().message, /pixKey/);
      assert.match(res.json().message, message);
    }
    for (const [key, normalised] of [
      ['+55 (21) 98765-4321', '+5521987654321'],
      ['+556133334444', '+556133334444'],
    ]) {
      const res = await cashout(key!);
      assert.equal(res.statusCode, 201, `${key}: ${res.body}`);
      assert.equal(res.json().pixKey, normalised);
    }
  });
});
