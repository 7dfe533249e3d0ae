// The SDK against a real gateway over HTTP: every operation of the seller and operator clients, the
// typed errors, and the paged iterators.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fund } from '../../test/helpers/funding.ts';
import { ADMIN_TOKEN } from '../../test/helpers/gateway.ts';
import { type BrowserInfo, DEFAULT_ACCEPT_HEADER } from '../src/browser.ts';
import {
  type Fetch,
  GatewayError,
  OperatorClient,
  PaginationLimitError,
  type SaleAuthentication,
  type SaleCardAuthentication,
  SellerClient,
} from '../src/index.ts';
import { boletoSale, cardSale, debitSale, FAST, pixSale, type SdkBench, startBench } from './harness.ts';

/** What browserInfo() reads on a phone (sdk/test/browser.test.ts runs it on faked globals). */
const browser: BrowserInfo = {
  userAgent: 'Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
  acceptHeader: DEFAULT_ACCEPT_HEADER,
  language: 'pt-BR',
  colorDepth: 24,
  screenHeight: 915,
  screenWidth: 412,
  timeZoneOffset: 180,
  javaEnabled: false,
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Runs `fn`, expects a GatewayError, returns it. */
async function refusal(fn: () => Promise<unknown>): Promise<GatewayError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${error}`);
    return error;
  }
  assert.fail('expected the call to be refused');
}

describe('SDK against a real gateway', () => {
  let bench: SdkBench;
  let client: SellerClient;
  let sellerId: number;

  before(async () => {
    bench = await startBench();
    const s = await bench.seller();
    client = s.client;
    sellerId = s.keys.id;
  });
  after(async () => {
    await bench?.close();
  });

  describe('sales and transactions', () => {
    test('a PIX sale: 201 with its BR Code, read back as a transaction with the same code', async () => {
      const { message, sale } = await client.createSale(pixSale(15000, { pix: { expiresInSeconds: 3600 } }));
      assert.equal(typeof message, 'string');
      assert.equal(sale.status, 'PENDENTE');
      assert.equal(sale.amount, '15000', 'the sale response carries cents as a string (spec)');
      assert.equal(sale.paymentMethod, 'PIX');
      assert.match(sale.payment.pix?.key ?? '', /^000201/);
      assert.match(sale.payment.pix?.qrCodeBase64 ?? '', /^data:image\/png;base64,/);

      const tx = await client.getTransaction(sale.id);
      assert.equal(tx.id, sale.id);
      assert.equal(tx.amount, 15000, 'the read carries cents as a number (spec)');
      assert.equal(tx.paymentMethod, 'PIX');
      assert.equal(tx.status, 'PENDENTE');
      assert.equal(tx.pixKey, sale.payment.pix?.key);
      assert.equal(tx.customer.email, 'maria@example.com');
      assert.equal(tx.items.length, 1);
    });

    test('a boleto sale: the linha digitável, read back', async () => {
      const { sale } = await client.createSale(boletoSale());
      assert.equal(sale.paymentMethod, 'BOLETO');
      const tx = await client.getTransaction(String(sale.id));
      assert.match(tx.boletoCode ?? '', /^\d{47}$/);
      assert.equal(tx.customer.document, '11222333000181', 'stored normalised');
      assert.equal(tx.items.length, 2);
    });

    test('a credit-card sale: brand, last four, installments and shipping, read back', async () => {
      const { sale } = await client.createSale(cardSale());
      assert.equal(sale.payment.installments, 3);
      const tx = await client.getTransaction(sale.id);
      assert.deepEqual([tx.paymentMethod, tx.cardLastFour, tx.installments], ['CREDIT_CARD', '1111', 3]);
      assert.equal(tx.cardBrand?.toLowerCase(), 'visa');
      assert.equal(tx.shipping?.zipCode, '01001000');
    });

    test("a debit sale with 3-D Secure: the answer names the shopper's page, the transaction whether it was authenticated", async () => {
      const authentication: SaleAuthentication = {
        returnUrl: 'https://loja.example.com/pedido/retorno',
        browser: { ...browser, acceptHeader: DEFAULT_ACCEPT_HEADER },
        ip: '203.0.113.7',
      };
      const { sale } = await client.createSale({ ...debitSale(), authentication });
      const auth: SaleCardAuthentication | null | undefined = sale.payment.card?.authentication;
      assert.equal(auth?.status, 'REQUIRED');
      assert.match(auth?.url ?? '', /\/checkout\/3ds\/[A-Za-z0-9_-]{32}$/);
      assert.ok(Date.parse(auth?.expiresAt ?? '') > Date.parse(sale.createdAt));
      const tx = await client.getTransaction(sale.id);
      assert.deepEqual([tx.paymentMethod, tx.status, tx.authenticated], ['DEBIT_CARD', 'PENDENTE', null]);
      // Without it, a debit sale is refused, naming the field.
      const e = await refusal(() => client.createSale(debitSale()));
      assert.deepEqual([e.status, e.details.map((d) => d.field)], [400, ['authentication']]);
      const pix = await client.createSale(pixSale(1500));
      assert.equal(pix.sale.payment.card, null);
    });

    test('bad input: a GatewayError with status, errorType VALIDATION_ERROR, field details and the request id', async () => {
      const body = { ...pixSale(15000), customer: { name: 'Maria', email: 'not-an-email' }, amount: 14999 };
      const e = await refusal(() => client.createSale(body, { idempotencyKey: 'bad-input-1' }));
      assert.equal(e.status, 400);
      assert.equal(e.errorType, 'VALIDATION_ERROR');
      assert.equal(typeof e.message, 'string');
      assert.ok(
        e.details.some((d) => d.field === 'customer.email'),
        JSON.stringify(e.details),
      );
      assert.ok(e.details.some((d) => d.field === 'amount'));
      assert.match(e.requestId ?? '', UUID, 'x-request-id');
      assert.equal(e.idempotencyKey, 'bad-input-1');
      assert.equal(e.attempts, 1, 'a 4xx is never retried');
      assert.deepEqual([e.method, e.path], ['POST', '/api/sales']);
    });

    test('errors without an identifier: 401 Unauthorized, 404 Not Found, 400 for a bad id', async () => {
      const stranger = new SellerClient({ baseUrl: bench.baseUrl, publicKey: 'pk_nope', privateKey: 'sk_nope', ...FAST });
      const unauthorised = await refusal(() => stranger.getBalance());
      assert.deepEqual([unauthorised.status, unauthorised.error, unauthorised.errorType], [401, 'Unauthorized', undefined]);
      const missing = await refusal(() => client.getTransaction(9_999_999));
      assert.deepEqual([missing.status, missing.errorType], [404, undefined]);
      const bad = await refusal(() => client.getTransaction('abc'));
      assert.equal(bad.status, 400);
    });

    test('cancel: PENDENTE → CANCELADO (a repeat changes nothing); a PAGO sale → 409 INVALID_TRANSITION', async () => {
      const { sale } = await client.createSale(pixSale(2000));
      const cancelled = await client.cancelTransaction(sale.id);
      assert.equal(cancelled.status, 'CANCELADO');
      assert.equal((await client.cancelTransaction(sale.id)).status, 'CANCELADO');
      const paid = (await client.createSale(pixSale(2100))).sale;
      await bench.operator.applyTransactionEvent(paid.id, { event: 'PAYMENT_CONFIRMED' });
      const e = await refusal(() => client.cancelTransaction(paid.id));
      assert.deepEqual([e.status, e.errorType], [409, 'INVALID_TRANSITION']);
    });

    test('refund of a paid card sale: partial then the rest, listed oldest first; too much → 422 REFUND_EXCEEDS_AMOUNT', async () => {
      const { sale } = await client.createSale(cardSale());
      await bench.operator.applyTransactionEvent(sale.id, { event: 'SENT_TO_PROCESSOR' });
      const paid = await bench.operator.applyTransactionEvent(sale.id, { event: 'APPROVED' });
      assert.equal(paid.status, 'PAGO');
      const tooMuch = await refusal(() => client.refundTransaction(sale.id, { amount: 16001 }));
      assert.deepEqual([tooMuch.status, tooMuch.errorType], [422, 'REFUND_EXCEEDS_AMOUNT']);
      const part = await client.refundTransaction(sale.id, { amount: 6000 });
      assert.deepEqual([part.amount, part.status, part.transactionId], [6000, 'SUCCEEDED', sale.id]);
      const rest = await client.refundTransaction(sale.id);
      assert.equal(rest.amount, 10000, 'no amount: all that is left');
      const { data } = await client.listRefunds(sale.id);
      assert.deepEqual(
        data.map((r) => r.id),
        [part.id, rest.id],
      );
      assert.equal((await client.getTransaction(sale.id)).status, 'ESTORNADO');
    });
  });

  describe('paged lists', () => {
    test('iterateTransactions follows nextCursor over several pages, newest first, fetching lazily', async () => {
      const s = await bench.seller();
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await s.client.createSale(pixSale(1000 + i))).sale.id);
      const pagesAsked: string[] = [];
      const counting: Fetch = (request) => {
        if (new URL(request.url).pathname === '/api/transactions') pagesAsked.push(new URL(request.url).search);
        return fetch(request);
      };
      const c = new SellerClient({ baseUrl: bench.baseUrl, publicKey: s.keys.publicKey, privateKey: s.keys.privateKey, fetch: counting });

      const seen: number[] = [];
      for await (const tx of c.iterateTransactions({ limit: 2 })) seen.push(tx.id);
      assert.deepEqual(seen, [...ids].reverse(), 'every sale once, newest first');
      assert.equal(pagesAsked.length, 3, `5 items at 2 a page: 3 pages (${pagesAsked.join(' ')})`);
      assert.ok(pagesAsked[1]?.includes('cursor='));

      pagesAsked.length = 0;
      for await (const tx of c.iterateTransactions({ limit: 2 })) {
        assert.equal(tx.id, ids[4]);
        break;
      }
      assert.equal(pagesAsked.length, 1, 'leaving after the first item fetched only the first page');

      pagesAsked.length = 0;
      const first3: number[] = [];
      for await (const tx of c.iterateTransactions({ limit: 2 }, { maxItems: 3 })) first3.push(tx.id);
      assert.deepEqual(first3, [ids[4], ids[3], ids[2]]);
      assert.equal(pagesAsked.length, 2);

      const walk = async () => {
        for await (const _ of c.iterateTransactions({ limit: 2 }, { maxPages: 2 })) {
        }
      };
      await assert.rejects(walk, PaginationLimitError, 'a list longer than maxPages is an error, not a silent cut');

      const filtered: string[] = [];
      for await (const tx of c.iterateTransactions({ limit: '1', status: 'PENDENTE', paymentMethod: 'PIX' })) filtered.push(tx.status);
      assert.equal(filtered.length, 5);
    });

    test('the one-page methods answer { data, nextCursor }', async () => {
      const page = await client.listTransactions({ limit: '1' });
      assert.equal(page.data.length, 1);
      assert.equal(typeof page.nextCursor, 'string');
      const next = await client.listTransactions({ limit: '1', cursor: page.nextCursor! });
      assert.notEqual(next.data[0]?.id, page.data[0]?.id);
    });

    test('iterateStatement: the journal lines of a funded seller, over pages', async () => {
      const s = await bench.seller();
      for (const cents of [1000, 2000, 3000]) await fund(bench.gw, s.keys.id, cents);
      const lines = [];
      for await (const line of s.client.iterateStatement({ limit: 1 })) lines.push(line);
      assert.deepEqual(
        lines.map((l) => [l.amount, l.bucket]),
        [
          [3000, 'available'],
          [2000, 'available'],
          [1000, 'available'],
        ],
      );
    });
  });

  describe('cashouts', () => {
    test('a cashout with a funded balance; read back; the balance moves; too much → 422 INSUFFICIENT_BALANCE', async () => {
      const s = await bench.seller();
      await fund(bench.gw, s.keys.id, 50_000);
      const cashout = await s.client.createCashout({ amount: 150.5, pixKey: 'Maria@Example.com', pixKeyType: 'EMAIL' });
      assert.deepEqual([cashout.status, cashout.amount, cashout.pixKey], ['PENDING', '150.50', 'maria@example.com']);
      assert.equal(typeof cashout.fees.total, 'string');
      assert.deepEqual(await s.client.getCashout(cashout.id), { ...cashout, failureReason: null, returnedAmount: '0.00' });
      assert.deepEqual(await s.client.getBalance(), { available: 50_000 - 15_050, blocked: 15_050, total: 50_000 });

      const e = await refusal(() => s.client.createCashout({ amount: 1000, pixKey: '52998224725', pixKeyType: 'CPF' }));
      assert.deepEqual([e.status, e.errorType], [422, 'INSUFFICIENT_BALANCE']);
      const badKey = await refusal(() => s.client.createCashout({ amount: 100, pixKey: '12345678901', pixKeyType: 'CPF' }));
      assert.deepEqual([badKey.status, badKey.errorType], [400, 'INVALID_PIX_KEY']);
      assert.ok(badKey.details.some((d) => d.field === 'pixKey'));

      const processing = await bench.operator.applyCashoutEvent(cashout.id, { event: 'PROCESSING' });
      assert.equal(processing.status, 'PROCESSING');
      await bench.operator.applyCashoutEvent(cashout.id, { event: 'COMPLETED' });
      assert.equal((await s.client.getCashout(cashout.id)).status, 'COMPLETED');
    });

    test('the same Idempotency-Key twice: one cashout, the first answer replayed; another body → 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const s = await bench.seller();
      await fund(bench.gw, s.keys.id, 50_000);
      const body = { amount: 100, pixKey: '52998224725', pixKeyType: 'CPF' as const };
      const first = await s.client.createCashout(body, { idempotencyKey: 'cashout-1' });
      const again = await s.client.createCashout(body, { idempotencyKey: 'cashout-1' });
      assert.deepEqual(again, first);
      const e = await refusal(() => s.client.createCashout({ ...body, amount: 101 }, { idempotencyKey: 'cashout-1' }));
      assert.deepEqual([e.status, e.errorType], [422, 'IDEMPOTENCY_KEY_REUSED']);
      assert.equal((await s.client.getBalance()).blocked, 10_000, 'one cashout');
    });
  });

  describe('webhooks and notifications', () => {
    test('create, list, test, resend, iterate the log, delete', async () => {
      const s = await bench.seller();
      const hook = await s.client.createWebhook({ url: 'http://127.0.0.1:9/hook', types: ['TRANSACTION', 'WITHDRAWAL'] });
      assert.deepEqual(hook.types, ['TRANSACTION', 'WITHDRAWAL']);
      const listed = await s.client.listWebhooks();
      assert.deepEqual(
        listed.data.map((w) => w.id),
        [hook.id],
      );
      const testNotification = await s.client.testWebhook(hook.id);
      assert.equal(testNotification.test, true);
      const { sale } = await s.client.createSale(pixSale(3000));
      await bench.operator.applyTransactionEvent(sale.id, { event: 'PAYMENT_CONFIRMED' });

      const log = [];
      for await (const n of s.client.iterateNotifications({ limit: 1 })) log.push(n);
      assert.equal(log.length, 2, 'the test notification and the PAGO one');
      assert.deepEqual(
        log.map((n) => n.kind),
        ['TRANSACTION_WEBHOOK', 'TRANSACTION_WEBHOOK'],
      );
      const resent = await s.client.resendNotification(log[0]!.id);
      assert.equal(resent.id, log[0]!.id);

      await s.client.deleteWebhook(hook.id);
      assert.deepEqual((await s.client.listWebhooks()).data, []);
      const gone = await refusal(() => s.client.deleteWebhook(hook.id));
      assert.equal(gone.status, 404);
    });

    test('the signing secret: read, rotate', async () => {
      const s = await bench.seller();
      const current = await s.client.getSigningSecret();
      assert.match(current.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      assert.equal(current.previousSecretExpiresAt, null);
      const rotated = await s.client.rotateSigningSecret();
      assert.notEqual(rotated.secret, current.secret);
      assert.equal(typeof rotated.previousSecretExpiresAt, 'string', 'the old one signs for 24 h more');
      assert.equal((await s.client.getSigningSecret()).secret, rotated.secret);
    });
  });

  describe('operator client', () => {
    test('sellers: create, read, update, keys issued and revoked, panel invite', async () => {
      const op = bench.operator;
      const created = await op.createSeller({ name: 'Loja SDK', email: 'sdk@example.com' });
      assert.match(created.publicKey, /^pk_/);
      assert.match(created.privateKey, /^sk_/);
      const seller = new SellerClient({ baseUrl: bench.baseUrl, publicKey: created.publicKey, privateKey: created.privateKey, ...FAST });
      assert.deepEqual(await seller.getBalance(), { available: 0, blocked: 0, total: 0 });

      const read = await op.getSeller(created.id);
      assert.deepEqual([read.id, read.name, read.transferAllowed], [created.id, 'Loja SDK', true]);
      const updated = await op.updateSeller(created.id, { transferAllowed: false });
      assert.equal(updated.transferAllowed, false);
      await fund(bench.gw, created.id, 20_000);
      const refused = await refusal(() => seller.createCashout({ amount: 100, pixKey: '52998224725' }));
      assert.deepEqual([refused.status, refused.errorType], [403, 'TRANSFER_NOT_ALLOWED']);

      const key = await op.createSellerKey(created.id);
      const second = new SellerClient({ baseUrl: bench.baseUrl, publicKey: key.publicKey, privateKey: key.privateKey, ...FAST });
      assert.equal((await second.getBalance()).available, 20_000);
      await op.revokeSellerKey(created.id, key.publicKey);
      assert.equal((await refusal(() => second.getBalance())).status, 401);

      const invite = await op.createPanelInvite(created.id);
      assert.match(invite.url, /\/painel\//);
      assert.ok(Date.parse(invite.expiresAt) > Date.now());
    });

    test('settings read and written; the ledger verifies', async () => {
      const op = bench.operator;
      const settings = await op.getSettings();
      const fine = settings.feeSchedule.chargebackFineCents;
      const written = await op.updateSettings({ feeSchedule: { chargebackFineCents: fine + 1 } });
      assert.equal(written.feeSchedule.chargebackFineCents, fine + 1);
      assert.deepEqual(written.feeSchedule.pix, settings.feeSchedule.pix, 'a partial schedule changes only what it names');
      await op.updateSettings({ feeSchedule: { chargebackFineCents: fine } });
      const ledger = await op.verifyLedger();
      assert.equal(ledger.ok, true, JSON.stringify(ledger.mismatches));
      assert.ok(ledger.sellersChecked >= 1);
    });

    test('the PIX sandbox: a payer pays through the embedded PSP, the sale is PAGO; a second Pix is returned whole', async () => {
      const { sale } = await client.createSale(pixSale(4200));
      const tx = await client.getTransaction(sale.id);
      const pix = await bench.operator.sandboxPayPix(tx.externalTransactionId);
      assert.match(pix.endToEndId, /^E/);
      assert.equal((await client.getTransaction(sale.id)).status, 'PAGO');
      const second = await bench.operator.sandboxPayPix(tx.externalTransactionId);
      const returns = await bench.operator.listPixReturns({ limit: 100 });
      assert.ok(returns.data.some((r) => r.endToEndId === second.endToEndId && r.transactionId === sale.id));
    });

    test('a wrong operator token: 401', async () => {
      const op = new OperatorClient({ baseUrl: bench.baseUrl, adminToken: `${ADMIN_TOKEN}x`, ...FAST });
      const e = await refusal(() => op.verifyLedger());
      assert.equal(e.status, 401);
    });

    test('events a sale cannot take: 409 INVALID_TRANSITION, typed', async () => {
      const { sale } = await client.createSale(pixSale(1500));
      const e = await refusal(() => bench.operator.applyTransactionEvent(sale.id, { event: 'APPROVED' }));
      assert.deepEqual([e.status, e.errorType], [409, 'INVALID_TRANSITION']);
      assert.ok(sellerId > 0);
    });
  });
});
