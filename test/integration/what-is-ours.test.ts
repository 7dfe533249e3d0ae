// What is ours (CONTRACT §11): a Pix is matched to this installation only through a reference it
// made or an id the provider gave for something it made, across every connector, and a Pix that
// matches nothing of ours is shown to the operator, never returned or credited. Two installations
// share one PSP account here, as two databases on one Efí account do: A runs the embedded PSP
// (every rail sandbox), B is configured with real rails (api-pix, efi boletos and payouts) pointed
// at A's PSP with the same credentials and receiver key. Only HTTP and the providers' wire
// protocols are used; the reconciliation jobs run as the workers run them.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Pix } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { boletoExample, pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';
import { makeTestCerts, opensslAvailable } from '../helpers/tls-certs.ts';

/** A port nobody listens on now, for a gateway whose callback URL must be known before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Installation {
  gw: Gateway;
  seller: SellerKeys;
  url: string;
}

interface Event {
  id: number;
  kind: string;
  state: string;
  reason: string | null;
  transactionId: number | null;
  amount: number | null;
  externalReference: string;
  followup: unknown;
}

describe('what is ours: a boleto paid by its Pix, and two installations on one PSP account', {
  skip: !opensslAvailable() && 'no openssl for the client certificate',
}, () => {
  let a: Installation;
  let b: Installation;

  before(async () => {
    const gwA = await startGateway({ env: { PIX_RECONCILE_SECONDS: '5' } });
    const urlA = await gwA.app.listen({ port: 0, host: '127.0.0.1' });
    await gwA.ctx.providers.listeningAt(urlA);
    const psp = gwA.ctx.rails.psp!;
    const certs = makeTestCerts();
    const dir = mkdtempSync(join(tmpdir(), 'ours-'));
    writeFileSync(join(dir, 'cert.pem'), certs.clientCert);
    writeFileSync(join(dir, 'key.pem'), certs.clientKey);
    const port = await freePort();
    const urlB = `http://127.0.0.1:${port}`;
    const gwB = await startGateway({
      env: {
        PIX_RECONCILE_SECONDS: '5',
        PIX_PROVIDER: 'api-pix',
        PIX_API_BASE_URL: psp.apiUrl,
        PIX_API_TOKEN_URL: psp.tokenUrl,
        PIX_API_CLIENT_ID: psp.clientId,
        PIX_API_CLIENT_SECRET: psp.clientSecret,
        PIX_API_CERT_FILE: join(dir, 'cert.pem'),
        PIX_API_KEY_FILE: join(dir, 'key.pem'),
        PIX_WEBHOOK_BASE_URL: urlB,
        PIX_WEBHOOK_SECRET: 'second-installation-webhook-secret-0123',
        BOLETO_PROVIDER: 'efi',
        EFI_CHARGES_BASE_URL: psp.efiUrl,
        EFI_CLIENT_ID: psp.clientId,
        EFI_CLIENT_SECRET: psp.clientSecret,
        BOLETO_WEBHOOK_SECRET: 'second-installation-boleto-secret-0123',
        PAYOUT_PROVIDER: 'efi',
        EFI_PIX_BASE_URL: psp.efiUrl,
        EFI_CERT_FILE: join(dir, 'cert.pem'),
        EFI_KEY_FILE: join(dir, 'key.pem'),
      },
    });
    await gwB.app.listen({ port, host: '127.0.0.1' });
    assert.equal(gwB.ctx.rails.psp, null, 'B runs no embedded PSP: every rail it uses is real');
    assert.notEqual(gwA.ctx.installationId, gwB.ctx.installationId);
    a = { gw: gwA, seller: await gwA.createSeller(), url: urlA };
    b = { gw: gwB, seller: await gwB.createSeller(), url: urlB };
  });
  after(async () => {
    await b?.gw.close();
    await a?.gw.close();
  });

  const inject = (i: Installation, method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    i.gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const read = async (i: Installation, id: number) => (await inject(i, 'GET', `/api/transactions/${id}`, i.seller.headers)).json();
  const balance = async (i: Installation) => (await inject(i, 'GET', '/api/public/balance', i.seller.headers)).json();
  const verify = async (i: Installation) => assert.equal((await inject(i, 'GET', '/admin/ledger/verify', adminHeaders)).json().ok, true);
  const reconcile = (i: Installation) => railJob(i.gw, 'pix-reconcile').run(i.gw.ctx);
  const eventsOf = async (i: Installation, e2e: string): Promise<Event[]> => {
    const res = await inject(i, 'GET', '/admin/provider-events?limit=100', adminHeaders);
    return (res.json().data as Event[]).filter((e) => e.externalReference === e2e);
  };
  /** The Pix as the PSP records it (its devoluções: money sent back to the payer). */
  const atPsp = (e2e: string): Promise<Pix> => a.gw.ctx.rails.apiPix.client.getPix(e2e);
  /** Pays at A's PSP as a payer's bank would: the Pix of charge `txid`. */
  const payPix = async (txid: string, amount: number): Promise<string> => {
    const paid = await inject(a, 'POST', `/sandbox/pix/${txid}/pay`, adminHeaders, { amount });
    assert.equal(paid.statusCode, 200, paid.body);
    return paid.json().endToEndId;
  };
  /** The txid of a boleto's Pix, as the payer's app reads it from the QR's location at the PSP. */
  const boletoPixTxid = async (i: Installation, saleId: number): Promise<string> => {
    const code: string = (await read(i, saleId)).boletoPixKey;
    assert.ok(code, 'the boleto has a Pix');
    const url = /br\.gov\.bcb\.pix25(\d{2})/i.exec(code)!;
    const location = code.slice(url.index + url[0].length, url.index + url[0].length + Number(url[1]));
    const jws = await (await fetch(`http://${location}`)).text();
    return JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString('utf8')).txid;
  };
  const waitFor = async (what: string, check: () => Promise<boolean>) => {
    for (let i = 0; i < 100; i++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`not within 5 s: ${what}`);
  };

  test('a gateway whose rails are all real has no sandbox table in its database', async () => {
    const sandboxTables = await b.gw.ctx.db.query(
      "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = 'sandbox_psp' OR table_name LIKE 'sandbox%'",
    );
    assert.deepEqual(sandboxTables.rows, []);
    const a_tables = await a.gw.ctx.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'sandbox_psp'",
    );
    assert.ok(a_tables.rows[0]!.n > 0, "the sandbox installation's PSP has its own schema");
  });

  for (const which of ['the sandbox', 'real rails'] as const) {
    test(`a boleto paid by its own Pix QR is paid once, and the payer keeps no refund (${which})`, async () => {
      const i = which === 'the sandbox' ? a : b;
      const other = i === a ? b : a;
      const before = await balance(i);
      const created = await inject(i, 'POST', '/api/sales', i.seller.headers, boletoExample());
      assert.equal(created.statusCode, 201, created.body);
      const id: number = created.json().sale.id;
      const e2e = await payPix(await boletoPixTxid(i, id), 25050);
      // Efí tells the boleto paid by the charge's notification.
      await waitFor('the boleto sale PAGO', async () => (await read(i, id)).status === 'PAGO');
      await reconcile(i);
      await reconcile(other);

      const sale = await read(i, id);
      assert.deepEqual([sale.status, sale.netAmount], ['PAGO', 24701]);
      assert.equal((await balance(i)).available - before.available, 24701, 'the seller is credited once');
      const received = (await eventsOf(i, e2e)).find((e) => e.kind === 'PIX_RECEIVED');
      assert.deepEqual(
        [received?.kind, received?.state, received?.transactionId, received?.followup],
        ['PIX_RECEIVED', 'applied', id, null],
        'the Pix is the boleto sale',
      );
      const foreign = (await eventsOf(other, e2e)).find((e) => e.kind === 'PIX_RECEIVED');
      assert.deepEqual([foreign?.state, foreign?.reason, foreign?.followup], ['needs_operator', "not this installation's", null]);
      assert.deepEqual((await atPsp(e2e)).devolucoes ?? [], [], 'nothing was sent back to the payer');

      // A second Pix on the paid boleto is money it cannot take: returned whole by the PSP that received it.
      const second = await payPix(await boletoPixTxid(i, id), 25050);
      await reconcile(i);
      const extra = (await eventsOf(i, second)).find((e) => e.kind === 'PIX_RECEIVED');
      assert.deepEqual([extra?.state, extra?.transactionId], ['needs_operator', id]);
      assert.match(extra!.reason!, /a second Pix for a boleto already paid/);
      assert.notEqual((extra!.followup as { status: string }).status, 'REFUSED', JSON.stringify(extra!.followup));
      await waitFor('the second Pix returned at the PSP', async () => ((await atPsp(second)).devolucoes ?? []).length === 1);
      assert.equal((await read(i, id)).status, 'PAGO');
      assert.equal((await balance(i)).available - before.available, 24701, 'still credited once');
      await verify(i);
      await verify(other);
    });
  }

  test("another installation's Pix on the shared account is shown to the operator, never returned", async () => {
    // Both installations register their callback for the one key; B's registration is the last.
    await reconcile(a);
    await reconcile(b);
    const created = await inject(a, 'POST', '/api/sales', a.seller.headers, pixExample({ amount: 49005 }));
    assert.equal(created.statusCode, 201, created.body);
    const id: number = created.json().sale.id;
    const txid: string = (await read(a, id)).externalTransactionId;
    assert.ok(txid.startsWith(a.gw.ctx.installationId), 'every txid begins with its installation id');
    const bBefore = await balance(b);
    const e2e = await payPix(txid, 49005);
    // The PSP calls B, the key's last registration; each installation also lists the account's Pix.
    await waitFor("B's callback stored the Pix", async () => (await eventsOf(b, e2e)).length > 0);
    await reconcile(b);
    await reconcile(a);

    const sale = await read(a, id);
    assert.equal(sale.status, 'PAGO', "A's sale is paid by A's reconciliation");
    const foreign = (await eventsOf(b, e2e)).find((e) => e.kind === 'PIX_RECEIVED');
    assert.deepEqual(
      [foreign?.kind, foreign?.state, foreign?.reason, foreign?.transactionId, foreign?.amount, foreign?.followup],
      ['PIX_RECEIVED', 'needs_operator', "not this installation's", null, 49005, null],
    );
    assert.deepEqual(await balance(b), bBefore, 'nothing credited at B');
    assert.deepEqual((await atPsp(e2e)).devolucoes ?? [], [], 'the payer is never refunded');
    await verify(a);
    await verify(b);
  });

  test('a Pix of ours that its sale cannot take is still returned whole', async () => {
    const created = await inject(b, 'POST', '/api/sales', b.seller.headers, pixExample({ amount: 1500 }));
    const id: number = created.json().sale.id;
    const txid: string = (await read(b, id)).externalTransactionId;
    await payPix(txid, 1500);
    const second = await payPix(txid, 1500);
    await reconcile(b);
    assert.equal((await read(b, id)).status, 'PAGO');
    const event = (await eventsOf(b, second)).find((e) => e.kind === 'PIX_RECEIVED');
    assert.deepEqual([event?.state, event?.reason, event?.transactionId], ['needs_operator', 'the sale is PAGO', id]);
    await waitFor('the second Pix returned at the PSP', async () => ((await atPsp(second)).devolucoes ?? []).length === 1);
  });
});
