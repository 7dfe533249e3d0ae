// Cashouts paid by a PSP (CONTRACT §11.3): the real `efi` connector against the embedded PSP over
// HTTP, the PSP calling the gateway back on its listening port. Every request the connector sends
// is checked with the zod schemas of Efí's official SDK; answers and callbacks with the JSON Schema
// of spec/providers/efi-pix-send.schema.json.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PixConfigWebhookBodySchema, PixSendBodySchema, PixSendParamsSchema } from 'sdk-node-apis-efi';
import { run, sql } from '../../src/db/sql.ts';
import { accountOf } from '../../src/providers/accounts.ts';
import type { EfiPixSendClient } from '../../src/providers/efi/pix-send-client.ts';
import { onPostgres } from '../helpers/databases.ts';
import { fund } from '../helpers/funding.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway, testEnv } from '../helpers/gateway.ts';
import { makeTestCerts, opensslAvailable } from '../helpers/tls-certs.ts';

const reconcile_s = 30;
const schema = JSON.parse(readFileSync('spec/providers/efi-pix-send.schema.json', 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const checkAnswer = ajv.compile(schema);

describe('payouts through Efí (the embedded PSP, over HTTP)', () => {
  let gw: Gateway;
  let now = new Date('2026-11-24T12:00:00Z');
  const sent: { params: unknown; body: unknown }[] = [];
  const webhooks: unknown[] = [];

  before(async () => {
    gw = await startGateway({ clock: { now: () => now }, env: { PIX_RECONCILE_SECONDS: String(reconcile_s) } });
    const url = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await gw.ctx.providers.listeningAt(url);
    // Every call the connector makes goes through this: requests checked by the SDK, answers by our schema.
    const real = gw.ctx.rails.efi.client;
    const checked: EfiPixSendClient = {
      async sendPix(idEnvio, body) {
        sent.push({ params: PixSendParamsSchema.parse({ idEnvio }), body: PixSendBodySchema.parse(body) });
        return real.sendPix(idEnvio, body);
      },
      async getSent(idEnvio) {
        PixSendParamsSchema.parse({ idEnvio });
        return real.getSent(idEnvio);
      },
      async putWebhook(chave, webhookUrl) {
        webhooks.push(PixConfigWebhookBodySchema.parse({ webhookUrl }));
        return real.putWebhook(chave, webhookUrl);
      },
    };
    gw.ctx.rails.efi.client = checked;
  });
  after(async () => {
    await gw?.close();
  });

  const psp = () => gw.ctx.rails.psp!;
  const job = () => railJob(gw, 'efi-payouts').run(gw.ctx);
  const later = (seconds: number) => {
    now = new Date(now.getTime() + seconds * 1000);
  };
  const cashout = (seller: SellerKeys, body: object) =>
    gw.app.inject({ method: 'POST', url: '/api/public/cashout', headers: seller.headers, payload: body });
  const read = async (seller: SellerKeys, id: number) =>
    (await gw.app.inject({ method: 'GET', url: `/api/public/cashout/${id}`, headers: seller.headers })).json();
  const balance = async (seller: SellerKeys) => (await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).json();
  const sentRows = async (id: number) =>
    (
      await run<{ id_envio: string; valor_cents: number }>(
        gw.ctx.db,
        sql`SELECT id_envio, valor_cents FROM sandbox_psp.sent WHERE info_pagador = ${`Saque ${id}`}`,
      )
    ).rows;
  const verifyLedger = async () =>
    assert.equal((await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json().ok, true);

  async function fundedSeller(cents = 100_000_00): Promise<SellerKeys> {
    const seller = await gw.createSeller();
    await fund(gw, seller.id, cents);
    return seller;
  }
  async function newCashout(seller: SellerKeys, body: object = { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' }): Promise<number> {
    const res = await cashout(seller, body);
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'PENDING');
    return res.json().id;
  }

  test('sent, PROCESSING on the 201, COMPLETED by the callback; the body is what the SDK accepts', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    assert.equal(await job(), 1);
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    assert.ok(webhooks.length >= 1, 'the paying key webhook was registered');
    const last = sent.at(-1)!.body as { valor: string; favorecido: { chave: string; cpf?: string }; pagador: { infoPagador: string } };
    const view = await read(seller, id);
    assert.equal(last.valor, view.netAmount, 'the net amount is sent');
    assert.deepEqual(last.favorecido, { chave: '52998224725', cpf: '52998224725' });
    await psp().settleSends(); // REALIZADO, then the callback
    const done = await read(seller, id);
    assert.equal(done.status, 'COMPLETED');
    assert.equal(done.failureReason, null);
    assert.equal(done.returnedAmount, '0.00');
    assert.equal((await balance(seller)).blocked, 0);
    assert.equal((await sentRows(id)).length, 1);
    await verifyLedger();
  });

  test('a refusal in the request → REJECTED with its reason, the balance restored', async () => {
    for (const [status, nome] of [
      [400, 'chave_invalida'],
      [404, 'chave_nao_encontrada'],
      [422, 'pagamento_negado'],
      [400, 'chave_nao_pertence_ao_documento'],
    ] as const) {
      const seller = await fundedSeller(50_000);
      const id = await newCashout(seller);
      psp().failNextSends(1, { status, nome });
      await job();
      const view = await read(seller, id);
      assert.equal(view.status, 'REJECTED', `${status} ${nome}`);
      assert.match(view.failureReason, new RegExp(nome));
      assert.deepEqual(await balance(seller), { available: 50_000, blocked: 0, total: 50_000 });
      assert.equal((await sentRows(id)).length, 0);
    }
    await verifyLedger();
  });

  test('the sandbox rule: an @reject.test key is taken, then NAO_REALIZADO → REJECTED, money back', async () => {
    const seller = await fundedSeller(50_000);
    const id = await newCashout(seller, { amount: 150, pixKey: 'loja@reject.test', pixKeyType: 'EMAIL' });
    await job();
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    await psp().settleSends();
    const view = await read(seller, id);
    assert.equal(view.status, 'REJECTED');
    assert.match(view.failureReason, /reject\.test/);
    assert.equal((await balance(seller)).available, 50_000);
  });

  test('429 and 5xx leave it PENDING; the next round sends it again with the same idEnvio (Retry-After when longer)', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    psp().failNextSends(1, { status: 500 });
    await job();
    assert.equal((await read(seller, id)).status, 'PENDING');
    psp().failNextSends(1, { status: 429, nome: 'limite_excedido', retryAfterSeconds: reconcile_s * 3 });
    later(reconcile_s);
    await job();
    assert.equal((await read(seller, id)).status, 'PENDING');
    later(reconcile_s);
    assert.equal(await job(), 0, 'Retry-After longer than the interval is waited out');
    later(reconcile_s * 2);
    await job();
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    const ids = new Set(
      sent
        .filter((s) => (s.body as { pagador: { infoPagador: string } }).pagador.infoPagador === `Saque ${id}`)
        .map((s) => (s.params as { idEnvio: string }).idEnvio),
    );
    assert.equal(ids.size, 1, 'every attempt with one idEnvio');
    assert.equal((await sentRows(id)).length, 1);
  });

  test('a lost answer (reset, hang) then a retry makes one Pix: the 409 is read back', async () => {
    for (const how of ['reset', 'hang'] as const) {
      const seller = await fundedSeller();
      const id = await newCashout(seller);
      psp().loseNextSendAnswers(1, how);
      // Its callback lost too (a hang outlives the settlement): only the retry can learn the outcome.
      psp().setCallbacks('drop');
      try {
        await job();
      } finally {
        psp().setCallbacks('deliver');
      }
      assert.equal((await read(seller, id)).status, 'PENDING', how);
      assert.equal((await sentRows(id)).length, 1, `${how}: the PSP has it`);
      later(reconcile_s);
      await job();
      assert.notEqual((await read(seller, id)).status, 'PENDING', how);
      await psp().settleSends();
      assert.equal((await read(seller, id)).status, 'COMPLETED', how);
      assert.equal((await sentRows(id)).length, 1, `${how}: one Pix`);
    }
    await verifyLedger();
  });

  test('a dropped callback ends COMPLETED by reconciliation within PIX_RECONCILE_SECONDS', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    await job();
    psp().setCallbacks('drop');
    try {
      await psp().settleSends();
    } finally {
      psp().setCallbacks('deliver');
    }
    assert.equal((await read(seller, id)).status, 'PROCESSING');
    later(reconcile_s);
    await job();
    assert.equal((await read(seller, id)).status, 'COMPLETED');
  });

  test('a returned Pix credits the seller once; the cashout stays COMPLETED', async () => {
    const seller = await fundedSeller(50_000);
    const id = await newCashout(seller);
    await job();
    await psp().settleSends();
    const idEnvio = (sent.at(-1)!.params as { idEnvio: string }).idEnvio;
    const before = (await balance(seller)).available;
    await psp().returnSent(idEnvio, 5_000);
    const view = await read(seller, id);
    assert.equal(view.status, 'COMPLETED');
    assert.equal(view.returnedAmount, '50.00');
    assert.equal((await balance(seller)).available, before + 5_000);
    // Reconciliation reads it again: nothing twice.
    later(3600 * 2);
    await job();
    assert.equal((await balance(seller)).available, before + 5_000);
    assert.ok(checkAnswer(await pspViewRaw(idEnvio)), JSON.stringify(checkAnswer.errors));
    await verifyLedger();
  });

  test('a forged callback (right secret, made-up idEnvio) moves nothing', async () => {
    const seller = await fundedSeller();
    const id = await newCashout(seller);
    const installation = gw.ctx.rails.efi.installationId;
    const secret = gw.config.pixRail.webhookSecret;
    const forged = {
      pix: [
        {
          endToEndId: `E12345678${'2'.repeat(12)}abcdefghijk`,
          status: 'REALIZADO',
          tipo: 'SOLICITACAO',
          valor: '148.00',
          horario: now.toISOString(),
          gnExtras: { idEnvio: `${installation}${id}` },
        },
      ],
    };
    assert.ok(checkAnswer(forged), JSON.stringify(checkAnswer.errors));
    const res = await gw.app.inject({ method: 'POST', url: `/providers/pix/${secret}/pix`, payload: forged });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await read(seller, id)).status, 'PENDING', 'Efí has no such sent Pix: nothing moves');
    const other = { pix: [{ ...forged.pix[0], gnExtras: { idEnvio: 'someoneelse123456' } }] };
    assert.equal((await gw.app.inject({ method: 'POST', url: `/providers/pix/${secret}/pix`, payload: other })).statusCode, 200);
    const events = await run<{ n: number }>(gw.ctx.db, sql`SELECT count(*)::int AS n FROM provider_events WHERE cashout_id = ${id}`);
    assert.equal(events.rows[0]!.n, 0);
  });

  async function pspViewRaw(idEnvio: string): Promise<unknown> {
    const token = await fetch(psp().tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${psp().clientId}:${psp().clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    const res = await fetch(`${psp().efiUrl}/v2/gn/pix/enviados/id-envio/${idEnvio}`, { headers: { authorization: `Bearer ${token.access_token}` } });
    return res.json();
  }
});

// The crash of CONTRACT §11.3 at its worst point: Efí has taken the Pix, the gateway has not heard
// so. A gateway process with PAYOUT_PROVIDER=efi sends to the PSP this test owns, which records the
// Pix and never answers; the process is killed there. The next round (here, in this process, as a
// restarted gateway would) sends the same idEnvio, meets 409 and reads the Pix back: one Pix, the
// cashout COMPLETED. A crash before the PUT leaves the claimed cashout PENDING, which the next round
// sends as it would any other (the 429/5xx test above); one after the answer leaves what this one does.
describe('payouts through Efí: a gateway killed between the send and its outcome', {
  skip: (!onPostgres && 'PGlite has no second process') || (!opensslAvailable() && 'no openssl for the client certificate'),
}, () => {
  let gw: Gateway;
  let url = '';
  let now = new Date();

  before(async () => {
    gw = await startGateway({ clock: { now: () => now } });
    url = await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await gw.ctx.providers.listeningAt(url);
  });
  after(async () => {
    await gw?.close();
  });

  function childEnv(): Record<string, string> {
    const psp = gw.ctx.rails.psp!;
    const certs = makeTestCerts();
    const dir = mkdtempSync(join(tmpdir(), 'efi-child-'));
    writeFileSync(join(dir, 'cert.pem'), certs.clientCert);
    writeFileSync(join(dir, 'key.pem'), certs.clientKey);
    return testEnv(gw.database.url, {
      PAYOUT_PROVIDER: 'efi',
      EFI_PIX_BASE_URL: psp.efiUrl,
      EFI_CLIENT_ID: psp.clientId,
      EFI_CLIENT_SECRET: psp.clientSecret,
      EFI_CERT_FILE: join(dir, 'cert.pem'),
      EFI_KEY_FILE: join(dir, 'key.pem'),
      PIX_WEBHOOK_BASE_URL: url,
    });
  }

  test('after kill -9 with the Pix at Efí: exactly one Pix, the cashout COMPLETED', async () => {
    const psp = gw.ctx.rails.psp!;
    const seller = await gw.createSeller();
    await fund(gw, seller.id, 50_000);
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/public/cashout',
      headers: seller.headers,
      payload: { amount: 150, pixKey: '52998224725', pixKeyType: 'CPF' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const id: number = res.json().id;
    const sentFor = async () =>
      (
        await run<{ id_envio: string; end_to_end_id: string }>(
          gw.ctx.db,
          sql`SELECT id_envio, end_to_end_id FROM sandbox_psp.sent WHERE info_pagador = ${`Saque ${id}`}`,
        )
      ).rows;
    const status = async () => (await run<{ status: string }>(gw.ctx.db, sql`SELECT status FROM cashouts WHERE id = ${id}`)).rows[0]!.status;

    // The child reaches this PSP as a real Efí account would (its account id is derived from the
    // PSP's URL and client id); for the child the cashout is that account's, as it would be had it made it.
    const asAccount = (account: string) => run(gw.ctx.db, sql`UPDATE cashouts SET account = ${account} WHERE id = ${id}`);
    await asAccount(accountOf('efi', psp.efiUrl, psp.clientId).id);
    psp.setCallbacks('drop'); // no callback may rescue it: only the next round can
    psp.loseNextSendAnswers(1, 'hang');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/payout-child.ts'], {
      env: { ...process.env, ...childEnv() },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let output = '';
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
    });
    try {
      const deadline = Date.now() + 30_000;
      while ((await sentFor()).length === 0 && Date.now() < deadline && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal((await sentFor()).length, 1, `the PSP took the Pix (child said: ${output})`);
      assert.equal(await status(), 'PENDING', 'the child never heard the answer');
      assert.ok(!output.includes('finished'), 'the child was still waiting for the answer');
      child.kill('SIGKILL');
      await exited;
    } finally {
      child.kill('SIGKILL');
      psp.setCallbacks('deliver');
    }
    await psp.settleSends();
    await asAccount(gw.ctx.providers.rails.PAYOUT);
    now = new Date(now.getTime() + 3600_000); // past the next check the child's claim set
    await railJob(gw, 'efi-payouts').run(gw.ctx);
    const rows = await sentFor();
    assert.equal(rows.length, 1, 'one Pix at the PSP, not two');
    const view = (await gw.app.inject({ method: 'GET', url: `/api/public/cashout/${id}`, headers: seller.headers })).json();
    assert.equal(view.status, 'COMPLETED');
    const external = await run<{ external_id: string }>(gw.ctx.db, sql`SELECT external_id FROM cashouts WHERE id = ${id}`);
    assert.equal(external.rows[0]!.external_id, rows[0]!.end_to_end_id, 'the cashout names the one Pix');
    const bal = (await gw.app.inject({ method: 'GET', url: '/api/public/balance', headers: seller.headers })).json();
    assert.equal(bal.blocked, 0);
    assert.equal((await gw.app.inject({ method: 'GET', url: '/admin/ledger/verify', headers: adminHeaders })).json().ok, true);
  });
});
