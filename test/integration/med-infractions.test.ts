// MED 2.0 through the rail (CONTRACT §11.5): the gateway's infractions poller and defence against the
// embedded PSP over HTTP, through a proxy that checks every request to Efí's infractions API with the
// zod schemas of Efí's SDK (MedListParamsSchema, MedSubmitDefense*) and every list answer with
// MedListResponseSchema. The money is checked by the seller's balance and the ledger's own proof.
// Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { MedListParamsSchema, MedListResponseSchema, MedSubmitDefenseBodySchema, MedSubmitDefenseParamsSchema } from 'sdk-node-apis-efi';
import { createPixTransport } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { efiInfractionSource } from '../../src/providers/efi/infraction-source.ts';
import { createEfiInfractionsClient } from '../../src/providers/efi/infractions-client.ts';
import { requestRefund, settleRefund } from '../../src/transactions/refund-moves.ts';
import type { Job } from '../../src/workers/job.ts';
import { type ExchangeChecker, startValidatingProxy, type ValidatingProxy } from '../helpers/api-pix-proxy.ts';
import { pixExample } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, railJob, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const issues = (what: string, r: { success: boolean; error?: { message: string } }) => (r.success ? [] : [`${what}: ${r.error?.message}`]);
const pathOnly = (path: string) => path.split('?')[0]!;

/** Efí's infractions endpoints, checked by the SDK's schemas; every other exchange passes unchecked. */
function infractionsChecker(log: string[]): ExchangeChecker {
  return {
    checks: (path) => pathOnly(path).startsWith('/v2/gn/infracoes'),
    request({ method, path, body }) {
      log.push(`${method} ${pathOnly(path)}`);
      const p = pathOnly(path);
      if (method === 'GET' && p === '/v2/gn/infracoes') {
        const query: Record<string, unknown> = Object.fromEntries(new URL(path, 'http://x').searchParams);
        for (const name of ['paginacao.paginaAtual', 'paginacao.itensPorPagina']) if (query[name] !== undefined) query[name] = Number(query[name]);
        return issues('params', MedListParamsSchema.safeParse(query));
      }
      const defence = /^\/v2\/gn\/infracoes\/([^/]+)\/defesa$/.exec(p);
      if (method === 'POST' && defence)
        return [
          ...issues('params', MedSubmitDefenseParamsSchema.safeParse({ idInfracao: decodeURIComponent(defence[1]!) })),
          ...issues('body', MedSubmitDefenseBodySchema.safeParse(body)),
        ];
      return [`${method} ${p} is no infractions operation`];
    },
    response({ method, path, status, body }) {
      if (method === 'GET' && pathOnly(path) === '/v2/gn/infracoes') {
        if (status !== 200) return [`answered ${status}: ${JSON.stringify(body)}`];
        return issues('answer', MedListResponseSchema.safeParse(body));
      }
      return [];
    },
  };
}

describe('MED 2.0: infractions from the PSP, the defence, the outcome', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let proxy: ValidatingProxy;
  let poller: Job;
  const log: string[] = [];
  let now = new Date();
  const inject = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
    gw.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const psp = () => gw.ctx.rails.psp!;

  before(async () => {
    gw = await startGateway({ clock: { now: () => now }, env: { PIX_RECONCILE_SECONDS: '5' } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    await gw.ctx.providers.listeningAt(`http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`);
    await railJob(gw, 'pix-reconcile').run(gw.ctx); // registers the callback URL
    proxy = await startValidatingProxy({ target: psp().efiUrl, checker: infractionsChecker(log) });
    const port = gw.ctx.providers.rail('PIX');
    const transport = createPixTransport({
      baseUrl: proxy.url,
      tokenUrl: psp().tokenUrl,
      clientId: psp().clientId,
      clientSecret: psp().clientSecret,
      // The token cache keeps the PSP's time (the test moves it), so a token the PSP deems expired is never sent.
      clock: () => now.getTime(),
    });
    assert.ok(port.infractions, 'PIX_MED_SOURCE is efi on the sandbox by default');
    port.infractions = efiInfractionSource(createEfiInfractionsClient(proxy.url, transport), port.account.id);
    poller = railJob(gw, 'med-infractions');
    seller = await gw.createSeller();
  });
  after(async () => {
    await gw?.close();
    await proxy?.close();
  });

  const read = async (id: number) => (await inject('GET', `/api/transactions/${id}`, seller.headers)).json();
  const balance = async () => (await inject('GET', '/api/public/balance', seller.headers)).json();
  const verify = async () => assert.equal((await inject('GET', '/admin/ledger/verify', adminHeaders)).json().ok, true);
  const poll = () => poller.run(gw.ctx);
  const notified = async (id: number, status: string) =>
    (
      await gw.ctx.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM notifications WHERE transaction_id = $1 AND payload::jsonb->>'status' = $2",
        [id, status],
      )
    ).rows[0]!.n;

  /** A PIX sale paid by a Pix at the PSP: its id and the Pix's endToEndId. */
  async function paidSale(amount = 15000): Promise<{ id: number; e2e: string }> {
    const res = await inject('POST', '/api/sales', seller.headers, pixExample({ amount }));
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().sale.id as number;
    const paid = await inject('POST', `/sandbox/sales/${id}/pay`, adminHeaders, {});
    assert.equal(paid.json().status, 'PAGO', paid.body);
    return { id, e2e: (await gw.ctx.db.query<{ e: string }>('SELECT pix_end_to_end_id AS e FROM transactions WHERE id = $1', [id])).rows[0]!.e };
  }

  const infractionEvents = async (identityLike: string) =>
    (
      await gw.ctx.db.query<{ state: string; reason: string | null; transaction_id: string | null }>(
        'SELECT state, reason, transaction_id FROM provider_events WHERE identity LIKE $1 ORDER BY id',
        [identityLike],
      )
    ).rows;

  test('an infraction opened on a paid sale: MED within one poll, the net blocked, notified once; the read shows it', async () => {
    const { id, e2e } = await paidSale();
    const before = await balance();
    const { idInfracao } = await psp().openInfraction(e2e, { razao: 'Golpe do falso vendedor relatado pelo pagador' });
    assert.equal((await read(id)).status, 'PAGO', 'nothing moves before the gateway hears of it');
    await poll();
    const sale = await read(id);
    assert.equal(sale.status, 'MED');
    assert.equal(sale.med.status, 'ABERTA');
    assert.equal(sale.med.reason, 'Golpe do falso vendedor relatado pelo pagador');
    assert.ok(Date.parse(sale.med.deadline) > Date.parse(sale.med.openedAt), 'a deadline after the opening');
    assert.equal(sale.med.defense, null);
    const after = await balance();
    assert.equal(before.available - after.available, sale.netAmount, 'the net leaves available');
    assert.equal(after.blocked - before.blocked, sale.netAmount, 'and is blocked');
    assert.equal(after.total, before.total);
    await poll();
    assert.equal(await notified(id, 'MED'), 1, 'the MED notification is sent once, however often the PSP lists it');
    assert.deepEqual(
      (await infractionEvents(`infracao/${idInfracao}:%`)).map((e) => e.state),
      ['applied'],
    );
    await verify();
  });

  test('a defence is sent once to the PSP and shown; the infraction then rejected: PAGO, released, notified', async () => {
    const { id, e2e } = await paidSale(20000);
    const before = await balance();
    const { idInfracao } = await psp().openInfraction(e2e);
    await poll();
    const justification = 'Produto entregue em 12/11/2026, comprovante de entrega assinado e rastreio AB123456789BR.';
    const short = await inject(
      'POST',
      `/api/transactions/${id}/med-defense`,
      { ...seller.headers, 'idempotency-key': 'short-1' },
      { justification: 'curta' },
    );
    assert.equal(short.statusCode, 400, short.body);
    assert.match(short.body, /justification/);
    const sentBefore = log.filter((l) => l.startsWith('POST')).length;
    const headers = { ...seller.headers, 'idempotency-key': `defesa-${id}` };
    const sent = await inject('POST', `/api/transactions/${id}/med-defense`, headers, { justification });
    assert.equal(sent.statusCode, 202, sent.body);
    assert.equal(sent.json().med.status, 'EM_DEFESA');
    assert.deepEqual({ ...sent.json().med.defense, sentAt: undefined }, { justification, status: 'SENT', refusalReason: null, sentAt: undefined });
    const replay = await inject('POST', `/api/transactions/${id}/med-defense`, headers, { justification });
    assert.equal(replay.statusCode, 202);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.deepEqual(replay.json(), sent.json(), 'the replay answers what the first answer said');
    const again = await inject(
      'POST',
      `/api/transactions/${id}/med-defense`,
      { ...seller.headers, 'idempotency-key': `outra-${id}` },
      { justification },
    );
    assert.equal(again.statusCode, 409, again.body);
    assert.equal(again.json().errorType, 'INVALID_TRANSITION');
    assert.equal(log.filter((l) => l.startsWith('POST')).length - sentBefore, 1, 'one defence reached the PSP');
    await poll();
    assert.equal((await read(id)).med.status, 'EM_DEFESA', 'the PSP lists it defended');
    assert.equal((await read(id)).status, 'MED', 'a defence moves no money');

    await psp().resolveInfraction(idInfracao, 'REJEITADA');
    await poll();
    const won = await read(id);
    assert.equal(won.status, 'PAGO');
    assert.equal(won.med.status, 'REJEITADA');
    assert.equal(won.med.defense.justification, justification);
    assert.deepEqual(await balance(), before, 'the block released to available');
    assert.equal(await notified(id, 'MED'), 1);
    assert.equal(await notified(id, 'PAGO'), 2, 'PAGO notified again when the MED is won (spec)');
    await verify();
  });

  test('a defence the PSP refuses is shown with its reason, and may be sent again', async () => {
    const { id, e2e } = await paidSale(3000);
    await psp().openInfraction(e2e);
    await poll();
    psp().refuseNextDefenses(1);
    const refused = await inject(
      'POST',
      `/api/transactions/${id}/med-defense`,
      { ...seller.headers, 'idempotency-key': `r1-${id}` },
      {
        justification: 'Serviço prestado conforme contrato assinado.',
      },
    );
    assert.equal(refused.statusCode, 202, refused.body);
    assert.equal(refused.json().med.defense.status, 'REFUSED');
    assert.match(refused.json().med.defense.refusalReason, /recusada/i);
    assert.equal(refused.json().med.status, 'ABERTA');
    const retried = await inject(
      'POST',
      `/api/transactions/${id}/med-defense`,
      { ...seller.headers, 'idempotency-key': `r2-${id}` },
      {
        justification: 'Serviço prestado conforme contrato assinado, segue comprovante.',
      },
    );
    assert.equal(retried.json().med.defense.status, 'SENT', retried.body);
  });

  test('a defence whose answer is lost stays SENDING, and the poller sends it again once, however many rounds run at once', async () => {
    const { id, e2e } = await paidSale(2500);
    await psp().openInfraction(e2e);
    await poll();
    const port = gw.ctx.providers.rail('PIX');
    const source = port.infractions!;
    port.infractions = { ...source, defend: async () => Promise.reject(new Error('connection reset')) };
    let sending: Record<string, unknown>;
    try {
      const res = await inject(
        'POST',
        `/api/transactions/${id}/med-defense`,
        { ...seller.headers, 'idempotency-key': `lost-${id}` },
        {
          justification: 'Mercadoria entregue, nota fiscal 1234 e rastreio em anexo.',
        },
      );
      assert.equal(res.statusCode, 202, res.body);
      sending = res.json();
    } finally {
      port.infractions = source;
    }
    assert.equal((sending.med as { defense: { status: string } }).defense.status, 'SENDING');
    const posted = () => log.filter((l) => l.startsWith('POST')).length;
    const before = posted();
    await poll();
    assert.equal(posted(), before, 'not sent again at once');
    now = new Date(now.getTime() + 3 * 60_000);
    await Promise.all([poll(), poll(), poll()]);
    assert.equal(posted() - before, 1, 'sent again exactly once');
    await poll();
    const read1 = await read(id);
    assert.deepEqual([read1.med.status, read1.med.defense.status], ['EM_DEFESA', 'SENT']);
  });

  test('accepted, then its devolução: ESTORNADO with the MED money (the block goes to the payer, available untouched)', async () => {
    const { id, e2e } = await paidSale(12000);
    const before = await balance();
    const { idInfracao } = await psp().openInfraction(e2e);
    await poll();
    const blocked = await balance();
    await psp().resolveInfraction(idInfracao, 'ACEITA');
    await poll();
    await railJob(gw, 'pix-reconcile').run(gw.ctx);
    const lost = await read(id);
    assert.equal(lost.status, 'ESTORNADO');
    assert.equal(lost.med.status, 'ACEITA');
    const after = await balance();
    assert.equal(after.available, blocked.available, 'nothing more from available');
    assert.equal(after.blocked, before.blocked, 'the block is gone, to the payer');
    assert.equal(await notified(id, 'ESTORNADO'), 1);
    await verify();
  });

  test('accepted and no devolução in 11 days: needs the operator, nothing moves', async () => {
    const { id, e2e } = await paidSale(4000);
    const { idInfracao } = await psp().openInfraction(e2e);
    await poll();
    await psp().resolveInfraction(idInfracao, 'ACEITA', { withoutDevolucao: true });
    await poll();
    assert.equal((await read(id)).status, 'MED', 'accepted: still blocked, waiting for the money to leave');
    const start = now;
    try {
      now = new Date(start.getTime() + 10 * 24 * 3600_000);
      await poll();
      assert.deepEqual(await infractionEvents(`infracao/${idInfracao}:overdue`), []);
      now = new Date(start.getTime() + 11 * 24 * 3600_000 + 60_000);
      await poll();
      const [overdue] = await infractionEvents(`infracao/${idInfracao}:overdue`);
      assert.equal(overdue?.state, 'needs_operator');
      assert.match(overdue!.reason!, /11 days/);
      assert.equal((await read(id)).status, 'MED');
    } finally {
      now = new Date(start.getTime() + 11 * 24 * 3600_000 + 120_000);
    }
  });

  test('an infraction while a refund is pending is held, then applied once the refund settles', async () => {
    const { id, e2e } = await paidSale(8000);
    const refund = await gw.ctx.db.tx((q) => requestRefund(q, id, { amount: 1000, requestedBy: 'SELLER', sellerId: seller.id }, now));
    assert.ok(refund.ok);
    const { idInfracao } = await psp().openInfraction(e2e);
    await poll();
    assert.equal((await read(id)).status, 'PAGO');
    assert.deepEqual(
      (await infractionEvents(`infracao/${idInfracao}:%`)).map((e) => e.state),
      ['held'],
    );
    await settleRefund(gw.ctx.db, refund.value.id, { status: 'FAILED', reason: 'test' }, now);
    await railJob(gw, 'provider-events-held').run(gw.ctx);
    assert.equal((await read(id)).status, 'MED');
    assert.deepEqual(
      (await infractionEvents(`infracao/${idInfracao}:%`)).map((e) => e.state),
      ['applied'],
    );
    await verify();
  });

  test("an infraction on a Pix that is not this installation's needs the operator, and nothing moves", async () => {
    const before = await balance();
    const pix = await psp().pay('OUTRAINSTALACAO0000000000000001', 5000);
    const { idInfracao } = await psp().openInfraction(pix.endToEndId);
    await poll();
    const [event] = await infractionEvents(`infracao/${idInfracao}:%`);
    assert.equal(event?.state, 'needs_operator');
    assert.equal(event?.reason, "not this installation's");
    assert.equal(event?.transaction_id, null);
    const kept = await gw.ctx.db.query('SELECT 1 FROM med_infractions WHERE id_infracao = $1', [idInfracao]);
    assert.equal(kept.rows.length, 0);
    assert.deepEqual(await balance(), before);
  });

  test('a cashout asked after the opening cannot take the blocked money', async () => {
    const { id, e2e } = await paidSale(50000);
    await psp().openInfraction(e2e);
    await poll();
    assert.equal((await read(id)).status, 'MED');
    const { available } = await balance();
    const cashout = (cents: number) =>
      inject(
        'POST',
        '/api/public/cashout',
        { ...seller.headers, 'idempotency-key': `saque-${cents}` },
        {
          amount: cents / 100,
          pixKey: '529.982.247-25',
          pixKeyType: 'CPF',
        },
      );
    const tooMuch = await cashout(available + 1);
    assert.equal(tooMuch.statusCode, 422, tooMuch.body);
    assert.equal(tooMuch.json().errorType, 'INSUFFICIENT_BALANCE');
    assert.equal((await cashout(available)).statusCode, 201);
    await verify();
  });

  test('every infractions request and answer passed the SDK schemas', () => {
    assert.ok(log.some((l) => l === 'GET /v2/gn/infracoes'));
    assert.ok(log.some((l) => l.startsWith('POST /v2/gn/infracoes/')));
    assert.deepEqual(proxy.violations, []);
  });
});
