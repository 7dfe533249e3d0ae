import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { getBoletoInfo, isValidBoleto } from '@brazilian-utils/brazilian-utils';
import fc from 'fast-check';
import jsQRImport from 'jsqr';
import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import pngjs from 'pngjs';
import { canonicalJson } from '../../src/domain/canonical-json.ts';
import { boletoExample, cardExample, debitExample, pixExample, shippingExample, TRANSACTION_KEYS } from '../helpers/fixtures.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from '../helpers/gateway.ts';

const { PNG } = pngjs;

// jsqr is CommonJS with `exports.default`: plain Node hands over the exports object, tsx the function.
const jsQR = (typeof jsQRImport === 'function' ? jsQRImport : jsQRImport.default) as typeof jsQRImport.default;

type Json = Record<string, unknown>;

const PIX_RECEIVER_KEY = '123e4567-e12b-12d1-a456-426655440000';
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
// 2026-11-20 23:00:00.123 in São Paulo (UTC−3): the business "today" is 2026-11-20.
const START = new Date('2026-11-21T02:00:00.123Z');

// Request bodies: CONTRACT §4's examples, from test/helpers/fixtures.ts.

// ---------- helpers ----------

const keysOf = (o: unknown) => Object.keys(o as object).sort();

async function createSale(gw: Gateway, seller: SellerKeys, body: unknown, headers: Record<string, string> = {}) {
  return gw.app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, ...headers }, payload: body as Json });
}

async function createOk(gw: Gateway, seller: SellerKeys, body: unknown) {
  const res = await createSale(gw, seller, body);
  assert.equal(res.statusCode, 201, res.body);
  return res.json().sale as Json & { id: number };
}

async function readTransaction(gw: Gateway, seller: SellerKeys, id: number | string) {
  return gw.app.inject({ method: 'GET', url: `/api/transactions/${id}`, headers: seller.headers });
}

async function countTransactions(gw: Gateway): Promise<number> {
  return Number((await gw.ctx.db.query<{ n: string }>('SELECT count(*)::text AS n FROM transactions')).rows[0]!.n);
}

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), written here so it depends on nothing under test. */
function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let k = 0; k < 8; k++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** Checks the PNG is 1-bit grayscale, decodes it with pngjs, then reads the QR with jsQR. */
function scanQrDataUri(uri: string): string | undefined {
  const prefix = 'data:image/png;base64,';
  assert.ok(uri.startsWith(prefix), `a PNG data URI, got ${uri.slice(0, 40)}…`);
  const png = Buffer.from(uri.slice(prefix.length), 'base64');
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    chunks.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
    at += 12 + length;
  }
  const ihdr = chunks.find((c) => c.type === 'IHDR')!.data;
  const [width, height] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4)];
  assert.deepEqual([ihdr[8], ihdr[9]], [1, 0], '1-bit grayscale');
  // Pixels from pngjs, an independent PNG decoder.
  const rgba = Uint8ClampedArray.from(PNG.sync.read(png).data);
  return jsQR(rgba, width, height)?.data;
}

const SALE_KEYS = ['createdAt', 'customer', 'id', 'payment', 'paymentMethod', 'shipping', 'status', 'amount'].sort();

function assertSaleShape(body: Json) {
  assert.deepEqual(keysOf(body), ['message', 'sale']);
  assert.equal(typeof body.message, 'string');
  const sale = body.sale as Json;
  assert.deepEqual(keysOf(sale), SALE_KEYS);
  assert.ok(Number.isSafeInteger(sale.id) && (sale.id as number) > 0, `sale.id a positive integer, got ${JSON.stringify(sale.id)}`);
  assert.equal(sale.status, 'PENDENTE');
  assert.equal(typeof sale.amount, 'string');
  assert.match(sale.amount as string, /^[1-9]\d*$/);
  assert.deepEqual(keysOf(sale.customer), ['document', 'email', 'name', 'phone']);
  assert.deepEqual(keysOf(sale.payment), ['boleto', 'card', 'installments', 'method', 'pix']);
  assert.match(sale.createdAt as string, ISO_MS);
  return sale as Json & { id: number; payment: Json; customer: Json };
}

// ---------- tests ----------

// A gateway costs about 2 s to start on PGlite, so the four describes below whose options differ only
// in their clock share one: each points the clock at its own source in before(). They use sellers of
// their own and count only their own changes. The card-data describe keeps its own gateway (a debug
// log stream, and a dump of every table).
let shared: Gateway | undefined;
let sharedClock: () => Date = () => START;
async function sharedGateway(now: () => Date): Promise<Gateway> {
  sharedClock = now;
  shared ??= await startGateway({ clock: { now: () => sharedClock() } });
  return shared;
}
after(async () => {
  await shared?.close();
});

describe('POST /api/sales: the Sale answer', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let current = START;
  before(async () => {
    gw = await sharedGateway(() => current);
    seller = await gw.createSeller();
  });

  test('CONTRACT §4 PIX example: 201 with exactly the Sale keys, types and units', async () => {
    current = START;
    const res = await createSale(gw, seller, pixExample());
    assert.equal(res.statusCode, 201, res.body);
    assert.match(res.headers['content-type'] as string, /^application\/json/);
    const sale = assertSaleShape(res.json());
    assert.equal(sale.amount, '15000');
    assert.equal(sale.paymentMethod, 'PIX');
    assert.deepEqual(sale.customer, { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' });
    assert.equal(sale.payment.method, 'PIX');
    assert.equal(sale.payment.installments, null);
    assert.equal(sale.payment.boleto, null);
    const pix = sale.payment.pix as Json;
    assert.deepEqual(keysOf(pix), ['expiresAt', 'key', 'qrCodeBase64', 'txid']);
    assert.equal(typeof pix.key, 'string');
    assert.equal(sale.shipping, null);
    assert.equal(sale.createdAt, START.toISOString());
    assert.equal(pix.expiresAt, new Date(START.getTime() + 3600_000).toISOString());
  });

  test('CONTRACT §4 credit-card example: installments a number, shipping as JSON text, pix/boleto null', async () => {
    current = START;
    const body = cardExample();
    const res = await createSale(gw, seller, body);
    assert.equal(res.statusCode, 201, res.body);
    const sale = assertSaleShape(res.json());
    assert.equal(sale.amount, '16000');
    assert.equal(sale.paymentMethod, 'CREDIT_CARD');
    assert.deepEqual(sale.customer, { name: 'Maria Silva', email: 'maria@example.com', document: null, phone: null });
    assert.deepEqual(sale.payment, { method: 'CREDIT_CARD', installments: 3, pix: null, boleto: null, card: { authentication: null } });
    assert.equal(typeof sale.shipping, 'string');
    assert.deepEqual(JSON.parse(sale.shipping as string), body.shipping);
    assert.ok(!res.body.includes('4111111111111111'), 'the card number is never echoed');
  });

  test('a credit-card sale without installments defaults to 1', async () => {
    const body = { ...cardExample(), installments: undefined };
    const sale = await createOk(gw, seller, body);
    assert.equal((sale.payment as Json).installments, 1);
  });

  test('a debit sale: installments null, shipping null (digital), pix and boleto null', async () => {
    current = START;
    const res = await createSale(gw, seller, debitExample());
    assert.equal(res.statusCode, 201, res.body);
    const sale = assertSaleShape(res.json());
    assert.equal(sale.amount, '4990');
    assert.equal(sale.paymentMethod, 'DEBIT_CARD');
    assert.deepEqual(sale.customer, { name: 'Ana Lima', email: 'ana@example.com', document: null, phone: '1133334444' });
    const { card, ...payment } = sale.payment as Json & { card: { authentication: { status: string; url: string; expiresAt: string } } };
    assert.deepEqual(payment, { method: 'DEBIT_CARD', installments: null, pix: null, boleto: null });
    // 3-D Secure: the shopper's page, valid 15 minutes.
    assert.equal(card.authentication.status, 'REQUIRED');
    assert.match(card.authentication.url, /\/checkout\/3ds\/[A-Za-z0-9_-]{32}$/);
    assert.equal(card.authentication.expiresAt, new Date(START.getTime() + 15 * 60_000).toISOString());
    assert.equal(sale.shipping, null);
  });

  test('a boleto sale: payment.boleto {code 47 digits, barcode 44, dueDate}; document stored without punctuation', async () => {
    current = START;
    const res = await createSale(gw, seller, boletoExample({ dueDate: '2026-12-31' }));
    assert.equal(res.statusCode, 201, res.body);
    const sale = assertSaleShape(res.json());
    assert.equal(sale.amount, '25050');
    assert.equal(sale.paymentMethod, 'BOLETO');
    assert.equal(sale.customer.document, '11222333000181');
    assert.equal(sale.payment.installments, null);
    assert.equal(sale.payment.pix, null);
    const boleto = sale.payment.boleto as {
      code: string;
      barcode: string;
      dueDate: string;
      pdfUrl: string;
      pix: { key: string; qrCodeBase64: string };
    };
    assert.deepEqual(keysOf(boleto), ['barcode', 'code', 'dueDate', 'pdfUrl', 'pix']);
    assert.match(boleto.pdfUrl, /^http:\/\/.+\/pdf$/);
    assert.deepEqual(keysOf(boleto.pix), ['key', 'qrCodeBase64']);
    assert.match(boleto.code, /^\d{47}$/);
    assert.match(boleto.barcode, /^\d{44}$/);
    assert.equal(boleto.dueDate, '2026-12-31');
    assert.equal(sale.shipping, null);
  });

  test('PIX with an expiry (the default): the PSP’s dynamic BR Code (CONTRACT §11.1), its location, the charge txid', async () => {
    current = START;
    const res = await gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: pixExample() });
    assert.equal(res.statusCode, 201, res.body);
    const sale = res.json().sale;
    const key = sale.payment.pix.key as string;
    const parsed = parsePix(key);
    if (hasError(parsed)) assert.fail(`pix-utils rejects ${key}: ${parsed.message}`);
    assert.ok(isDynamicPix(parsed), `pix-utils reads a dynamic PIX, got ${key}`);
    assert.match(parsed.url, /^localhost:\d+\/qr\/v2\/[0-9a-f]{32}$/, 'the location of the embedded PSP, in tag 26-25');
    assert.equal(parsed.merchantName, 'GATEWAY SANDBOX');
    assert.equal(key.slice(-4), crc16(key.slice(0, -4)));
    assert.equal(scanQrDataUri(sale.payment.pix.qrCodeBase64), key, 'the QR is made from the PSP code');
    const read = (await gw.app.inject({ method: 'GET', url: `/api/transactions/${sale.id}`, headers: seller.headers })).json();
    assert.match(read.externalTransactionId, /^[A-Za-z0-9]{26,35}$/, 'the charge txid');
    const cob = await gw.ctx.rails.apiPix.client.getCob(read.externalTransactionId);
    assert.deepEqual([cob.status, cob.valor.original, cob.pixCopiaECola], ['ATIVA', '150.00', key], 'the charge at the PSP');
  });

  test('PIX without expiry: a static BR Code pix-utils parses: amount, receiver key, merchant, city, CRC; txids differ', async () => {
    current = START;
    const a = await createOk(gw, seller, pixExample({ pix: { expiresInSeconds: null } }));
    const b = await createOk(gw, seller, pixExample({ pix: { expiresInSeconds: null } }));
    const txids: string[] = [];
    for (const sale of [a, b]) {
      const key = (sale.payment as { pix: { key: string } }).pix.key;
      const parsed = parsePix(key);
      if (hasError(parsed)) assert.fail(`pix-utils rejects ${key}: ${parsed.message}`);
      assert.ok(isStaticPix(parsed), `pix-utils reads a static PIX, got ${key}`);
      assert.equal(parsed.transactionAmount, 150.0);
      assert.equal(parsed.pixKey, PIX_RECEIVER_KEY);
      assert.equal(parsed.merchantName, 'GATEWAY SANDBOX');
      assert.equal(parsed.merchantCity, 'SAO PAULO');
      assert.equal(parsed.transactionCurrency, '986');
      assert.equal(parsed.countryCode, 'BR');
      assert.ok(key.includes('0014br.gov.bcb.pix'), `the GUI br.gov.bcb.pix, got ${key}`);
      // CRC16 over everything up to and including "6304", computed independently.
      assert.equal(key.slice(-8, -4), '6304');
      assert.equal(key.slice(-4), crc16(key.slice(0, -4)));
      assert.ok(parsed.txid && parsed.txid !== '***', `a txid unique to the sale, got ${JSON.stringify(parsed.txid)}`);
      txids.push(parsed.txid);
    }
    assert.notEqual(txids[0], txids[1]);
  });

  test('PIX: qrCodeBase64 is a PNG data URI that decodes to exactly the key', async () => {
    const sale = await createOk(gw, seller, pixExample());
    const pix = (sale.payment as { pix: { key: string; qrCodeBase64: string } }).pix;
    assert.ok(pix.qrCodeBase64.startsWith('data:image/png;base64,'), `a PNG data URI, got ${pix.qrCodeBase64.slice(0, 40)}…`);
    assert.equal(scanQrDataUri(pix.qrCodeBase64), pix.key);
  });

  test('PIX: expiresAt is createdAt + 3600 s by default, + N s when asked, null when expiresInSeconds is null', async () => {
    current = START;
    const cases: [Json | undefined, number | null][] = [
      [undefined, 3600],
      [{}, 3600],
      [{ expiresInSeconds: 60 }, 60],
      [{ expiresInSeconds: 86_400 }, 86_400],
      [{ expiresInSeconds: 31_536_000 }, 31_536_000],
      [{ expiresInSeconds: null }, null],
    ];
    for (const [pixOption, seconds] of cases) {
      const body: Json = { ...pixExample() };
      if (pixOption === undefined) delete body.pix;
      else body.pix = pixOption;
      const sale = await createOk(gw, seller, body);
      const pix = (sale.payment as { pix: { expiresAt: string | null } }).pix;
      const createdAt = Date.parse(sale.createdAt as string);
      if (seconds === null) assert.equal(pix.expiresAt, null);
      else {
        assert.match(pix.expiresAt!, ISO_MS);
        assert.equal(Date.parse(pix.expiresAt!) - createdAt, seconds * 1000, JSON.stringify(pixOption));
      }
    }
  });

  test('boleto: a valid linha digitável (@brazilian-utils) encoding amount and due date, and the barcode it stands for', async () => {
    current = START;
    const sale = await createOk(gw, seller, boletoExample({ dueDate: '2027-03-15' }));
    const boleto = (sale.payment as { boleto: { code: string; barcode: string; dueDate: string } }).boleto;
    assert.equal(isValidBoleto(boleto.code), true, boleto.code);
    const info = getBoletoInfo(boleto.code, { referenceDate: new Date('2026-11-21T12:00:00Z') });
    assert.ok(info, `@brazilian-utils reads the linha ${boleto.code}`);
    assert.equal(info.amount, 25050);
    assert.equal(info.bankCode, '001');
    assert.ok(info.expirationDate, `a due date read from ${boleto.code}`);
    assert.equal(Math.round((info.expirationDate.getTime() - Date.parse('2027-03-15T00:00:00Z')) / 86_400_000), 0, info.expirationDate.toISOString());
    // The linha's last 14 digits are the barcode's factor + amount; its bank and currency lead both.
    assert.equal(boleto.code.slice(-14), boleto.barcode.slice(5, 19));
    assert.equal(boleto.code.slice(0, 4), boleto.barcode.slice(0, 4));
    assert.equal(boleto.code[32], boleto.barcode[4], 'general check digit');
    assert.equal(Number(boleto.barcode.slice(9, 19)), 25050);
  });

  test('boleto: the default due date is São Paulo today + 3 days', async () => {
    current = START; // 2026-11-21T02:00Z is still 2026-11-20 in São Paulo
    const sale = await createOk(gw, seller, boletoExample());
    const boleto = (sale.payment as { boleto: { code: string; dueDate: string } }).boleto;
    assert.equal(boleto.dueDate, '2026-11-23');
    const info = getBoletoInfo(boleto.code, { referenceDate: new Date('2026-11-21T12:00:00Z') });
    assert.equal(info?.expirationDate?.toISOString().slice(0, 10), '2026-11-23');
    current = new Date('2026-11-21T03:00:00.000Z'); // now 2026-11-21 in São Paulo
    const later = await createOk(gw, seller, boletoExample());
    assert.equal((later.payment as { boleto: { dueDate: string } }).boleto.dueDate, '2026-11-24');
    // today itself is accepted as a due date
    const today = await createOk(gw, seller, boletoExample({ dueDate: '2026-11-21' }));
    assert.equal((today.payment as { boleto: { dueDate: string } }).boleto.dueDate, '2026-11-21');
    current = START;
  });
});

describe('GET /api/transactions/{id}', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let other: SellerKeys;
  const current = START;
  before(async () => {
    gw = await sharedGateway(() => current);
    seller = await gw.createSeller();
    other = await gw.createSeller({ name: 'Outra', email: 'outra@example.com' });
  });

  function assertTransactionShape(t: Json) {
    assert.deepEqual(keysOf(t), TRANSACTION_KEYS);
    assert.equal(typeof t.amount, 'number');
    assert.equal(t.status, 'PENDENTE');
    assert.equal(t.netAmount, null);
    assert.equal(t.systemFee, null);
    assert.equal(t.reserveAmount, null);
    assert.equal(t.completedAt, null);
    assert.match(t.date as string, ISO_MS);
    assert.equal(t.date, START.toISOString());
    assert.equal(typeof t.externalTransactionId, 'string');
    assert.ok((t.externalTransactionId as string).length > 0, 'externalTransactionId is not empty');
    assert.deepEqual(keysOf(t.customer), ['document', 'email', 'name', 'phone']);
    for (const item of t.items as Json[]) {
      assert.deepEqual(keysOf(item), ['id', 'quantity', 'tangible', 'title', 'unitPrice']);
      assert.ok(Number.isSafeInteger(item.id), `item id an integer, got ${JSON.stringify(item.id)}`);
      assert.equal(typeof item.unitPrice, 'number');
    }
  }

  test('PIX: every key present, amounts in cents as numbers, pixKey = the sale key, card and boleto fields null', async () => {
    const sale = await createOk(gw, seller, pixExample());
    const res = await readTransaction(gw, seller, sale.id);
    assert.equal(res.statusCode, 200);
    const t = res.json();
    assertTransactionShape(t);
    assert.equal(t.id, sale.id);
    assert.equal(t.amount, 15000);
    assert.equal(t.paymentMethod, 'PIX');
    assert.equal(t.pixKey, (sale.payment as { pix: { key: string } }).pix.key);
    assert.deepEqual([t.cardLastFour, t.cardBrand, t.boletoCode, t.installments, t.shipping], [null, null, null, null, null]);
    assert.deepEqual(t.customer, { name: 'Maria Silva', email: 'maria@example.com', document: '52998224725', phone: '11987654321' });
    assert.equal(t.items.length, 1);
    assert.deepEqual({ ...t.items[0], id: 0 }, { id: 0, title: 'Curso', unitPrice: 15000, quantity: 1, tangible: false });
  });

  test('credit card: cardLastFour, cardBrand, installments, and shipping as an object', async () => {
    const body = cardExample();
    const sale = await createOk(gw, seller, body);
    const t = (await readTransaction(gw, seller, sale.id)).json();
    assertTransactionShape(t);
    assert.equal(t.amount, 16000);
    assert.equal(t.paymentMethod, 'CREDIT_CARD');
    assert.equal(t.cardLastFour, '1111');
    assert.equal(t.cardBrand, 'VISA');
    assert.equal(t.installments, 3);
    assert.deepEqual(t.shipping, body.shipping);
    assert.deepEqual(JSON.parse(sale.shipping as string), t.shipping);
    assert.deepEqual([t.pixKey, t.boletoCode], [null, null]);
    assert.deepEqual(
      t.items.map((i: Json) => [i.title, i.unitPrice, i.quantity, i.tangible]),
      [['Camiseta', 15000, 1, true]],
    );
  });

  test('debit card and boleto: their own fields, the rest null; items in request order with distinct ids', async () => {
    const debit = (await readTransaction(gw, seller, (await createOk(gw, seller, debitExample())).id)).json();
    assertTransactionShape(debit);
    assert.deepEqual(
      [debit.cardLastFour, debit.cardBrand, debit.installments, debit.pixKey, debit.boletoCode, debit.shipping],
      ['4444', 'MASTERCARD', null, null, null, null],
    );
    const sale = await createOk(gw, seller, boletoExample({ dueDate: '2026-12-31' }));
    const boleto = (await readTransaction(gw, seller, sale.id)).json();
    assertTransactionShape(boleto);
    assert.equal(boleto.amount, 25050);
    assert.equal(boleto.boletoCode, (sale.payment as { boleto: { code: string } }).boleto.code);
    assert.deepEqual([boleto.cardLastFour, boleto.cardBrand, boleto.installments, boleto.pixKey, boleto.shipping], [null, null, null, null, null]);
    assert.deepEqual(
      boleto.items.map((i: Json) => [i.title, i.unitPrice, i.quantity]),
      [
        ['Livro', 10025, 2],
        ['Frete grátis', 5000, 1],
      ],
    );
    assert.notEqual(boleto.items[0].id, boleto.items[1].id);
  });

  test("a bad id is 400, an unknown id 404, another seller's sale 403", async () => {
    const sale = await createOk(gw, seller, pixExample());
    for (const id of ['abc', '0', '1.5', '-1', '01', '9007199254740992']) {
      const res = await readTransaction(gw, seller, id);
      assert.equal(res.statusCode, 400, id);
      assert.equal(typeof res.json().message, 'string');
    }
    const missing = await readTransaction(gw, seller, 987654321);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(Object.keys(missing.json()), ['error', 'message']);
    const forbidden = await readTransaction(gw, other, sale.id);
    assert.equal(forbidden.statusCode, 403);
    assert.deepEqual(Object.keys(forbidden.json()), ['error', 'message']);
    assert.ok(!forbidden.body.includes('Maria'), 'nothing of the sale leaks');
    const noKeys = await gw.app.inject({ method: 'GET', url: `/api/transactions/${sale.id}` });
    assert.equal(noKeys.statusCode, 401);
  });
});

describe('GET /api/transactions (list)', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  let other: SellerKeys;
  const ids: number[] = [];
  const methods = new Map<number, string>();
  before(async () => {
    gw = await sharedGateway(() => START);
    seller = await gw.createSeller();
    other = await gw.createSeller({ name: 'Outra', email: 'outra@example.com' });
    const bodies = [pixExample(), cardExample(), boletoExample(), pixExample(), debitExample(), boletoExample(), pixExample()];
    for (const body of bodies) {
      const sale = await createOk(gw, seller, body);
      ids.push(sale.id);
      methods.set(sale.id, body.paymentMethod as string);
    }
    await createOk(gw, other, pixExample());
    await createOk(gw, other, boletoExample());
    // Pay two of them (a PIX and a boleto) so the status filter has something to tell apart.
    for (const id of [ids[0]!, ids[2]!]) {
      const res = await gw.app.inject({
        method: 'POST',
        url: `/admin/transactions/${id}/events`,
        headers: adminHeaders,
        payload: { event: 'PAYMENT_CONFIRMED' },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
  });

  const list = (seller: SellerKeys, query = '') => gw.app.inject({ method: 'GET', url: `/api/transactions${query}`, headers: seller.headers });

  test("newest first, in the Transaction shape, only the seller's own", async () => {
    const res = await list(seller);
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.deepEqual(keysOf(body), ['data', 'nextCursor']);
    assert.equal(body.nextCursor, null);
    assert.deepEqual(
      body.data.map((t: Json) => t.id),
      [...ids].reverse(),
    );
    for (const t of body.data) assert.deepEqual(keysOf(t), TRANSACTION_KEYS);
    const theirs = (await list(other)).json().data.map((t: Json) => t.id);
    assert.equal(theirs.length, 2);
    assert.ok(
      theirs.every((id: number) => !ids.includes(id)),
      `the other seller's list ${JSON.stringify(theirs)} holds none of ${JSON.stringify(ids)}`,
    );
  });

  test('filters by status and by paymentMethod, alone and together', async () => {
    const paid = (await list(seller, '?status=PAGO')).json().data;
    assert.deepEqual(
      paid.map((t: Json) => t.id),
      [ids[2], ids[0]],
    );
    assert.ok(
      paid.every((t: Json) => t.status === 'PAGO'),
      `status=PAGO listed ${JSON.stringify(paid.map((t: Json) => t.status))}`,
    );
    const pending = (await list(seller, '?status=PENDENTE')).json().data;
    assert.equal(pending.length, 5);
    assert.ok(
      pending.every((t: Json) => t.status === 'PENDENTE'),
      `status=PENDENTE listed ${JSON.stringify(pending.map((t: Json) => t.status))}`,
    );
    const pix = (await list(seller, '?paymentMethod=PIX')).json().data;
    assert.deepEqual(
      pix.map((t: Json) => t.id),
      ids.filter((id) => methods.get(id) === 'PIX').reverse(),
    );
    const boletos = (await list(seller, '?paymentMethod=BOLETO&status=PENDENTE')).json().data;
    assert.deepEqual(
      boletos.map((t: Json) => t.id),
      [ids[5]],
    );
    const none = (await list(seller, '?status=CHARGEBACK')).json();
    assert.deepEqual(none, { data: [], nextCursor: null });
    for (const bad of ['?status=FOO', '?paymentMethod=CASH', '?status=pago']) {
      const res = await list(seller, bad);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.json().errorType, 'VALIDATION_ERROR');
    }
  });

  test('cursor pagination with limit=3 walks every page without duplicates or gaps', async () => {
    const seen: number[] = [];
    const pageSizes: number[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res = await list(seller, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      pageSizes.push(body.data.length);
      seen.push(...body.data.map((t: Json) => t.id as number));
      cursor = body.nextCursor;
      if (cursor === null) break;
      assert.equal(typeof cursor, 'string');
    }
    assert.equal(cursor, null);
    assert.deepEqual(pageSizes, [3, 3, 1]);
    assert.deepEqual(seen, [...ids].reverse());
    assert.equal(new Set(seen).size, seen.length);
    // exactly one page's worth leaves no next cursor
    const exact = (await list(seller, '?limit=7')).json();
    assert.equal(exact.data.length, 7);
    assert.equal(exact.nextCursor, null);
    const filtered = (await list(seller, '?limit=1&paymentMethod=PIX')).json();
    assert.equal(filtered.data.length, 1);
    const next = (await list(seller, `?limit=100&paymentMethod=PIX&cursor=${filtered.nextCursor}`)).json();
    assert.deepEqual(
      [...filtered.data, ...next.data].map((t: Json) => t.id),
      ids.filter((id) => methods.get(id) === 'PIX').reverse(),
    );
  });

  test('limit must be 1..100 and cursor a positive integer: 400 VALIDATION_ERROR naming the field', async () => {
    for (const limit of ['0', '101', 'x', '-1', '1.5', '']) {
      const res = await list(seller, `?limit=${limit}`);
      assert.equal(res.statusCode, 400, `limit=${limit}`);
      const body = res.json();
      assert.equal(body.errorType, 'VALIDATION_ERROR');
      assert.ok(
        body.details.some((d: { field: string }) => d.field === 'limit'),
        res.body,
      );
    }
    for (const limit of ['1', '100']) assert.equal((await list(seller, `?limit=${limit}`)).statusCode, 200);
    const badCursor = await list(seller, '?cursor=abc');
    assert.equal(badCursor.statusCode, 400);
    assert.ok(
      badCursor.json().details.some((d: { field: string }) => d.field === 'cursor'),
      `a detail names cursor: ${badCursor.body}`,
    );
  });

  test("another seller's cursor never reveals this seller's sales", async () => {
    const res = await list(other, `?cursor=${ids[ids.length - 1]! + 1}&limit=100`);
    assert.equal(res.statusCode, 200);
    assert.ok(
      res.json().data.every((t: Json) => !ids.includes(t.id as number)),
      `the other seller's page ${res.body} holds none of ${JSON.stringify(ids)}`,
    );
  });
});

describe('POST /api/sales validation', () => {
  let gw: Gateway;
  let seller: SellerKeys;
  before(async () => {
    gw = await sharedGateway(() => START);
    seller = await gw.createSeller();
  });

  const items = (n: number) => Array.from({ length: n }, () => ({ title: 'x', unitPrice: 100, quantity: 1, tangible: false }));
  const withCard = (card: Json): Json => ({ ...cardExample(), card: { ...(cardExample().card as Json), ...card } });
  const debitWith = (card: Json): Json => ({ ...debitExample(), card: { ...(debitExample().card as Json), ...card } });

  // Each case breaks exactly one CONTRACT §4 rule of an otherwise valid body.
  const cases: [name: string, body: Json, field: string][] = [
    ['amount as a string', { ...pixExample(), amount: '15000' }, 'amount'],
    ['amount below 100', { ...pixExample(), amount: 99, items: [{ title: 'x', unitPrice: 99, quantity: 1, tangible: false }] }, 'amount'],
    ['amount as a float', { ...pixExample(), amount: 15000.5 }, 'amount'],
    ['amount not the sum', { ...pixExample(), amount: 15001 }, 'amount'],
    ['amount not the sum + shipping.fee', { ...cardExample(), amount: 15000 }, 'amount'],
    ['missing paymentMethod', { ...pixExample(), paymentMethod: undefined }, 'paymentMethod'],
    ['unknown paymentMethod', { ...pixExample(), paymentMethod: 'TRANSFER' }, 'paymentMethod'],
    ['missing customer', { ...pixExample(), customer: undefined }, 'customer'],
    ['missing customer.name', { ...pixExample(), customer: { email: 'maria@example.com' } }, 'customer.name'],
    ['missing customer.email', { ...pixExample(), customer: { name: 'Maria Silva' } }, 'customer.email'],
    ['bad customer.email', { ...pixExample(), customer: { name: 'Maria Silva', email: 'maria@' } }, 'customer.email'],
    [
      'bad document',
      { ...pixExample(), customer: { name: 'Maria Silva', email: 'maria@example.com', document: '12345678900' } },
      'customer.document',
    ],
    ['boleto without document', { ...boletoExample(), customer: { name: 'João', email: 'joao@example.com' } }, 'customer.document'],
    [
      'phone with letters',
      { ...pixExample(), customer: { name: 'Maria Silva', email: 'maria@example.com', phone: '11abc654321' } },
      'customer.phone',
    ],
    ['phone too short', { ...pixExample(), customer: { name: 'Maria Silva', email: 'maria@example.com', phone: '123456789' } }, 'customer.phone'],
    ['0 items', { ...pixExample(), items: [] }, 'items'],
    ['101 items', { ...pixExample(), amount: 10100, items: items(101) }, 'items'],
    ['items not an array', { ...pixExample(), items: { title: 'x' } }, 'items'],
    ['item.quantity 0', { ...pixExample(), items: [{ title: 'Curso', unitPrice: 15000, quantity: 0, tangible: false }] }, 'items.0.quantity'],
    [
      'item.quantity 10001',
      { ...pixExample(), amount: 10001, items: [{ title: 'Curso', unitPrice: 1, quantity: 10001, tangible: false }] },
      'items.0.quantity',
    ],
    [
      'item.unitPrice 0',
      {
        ...pixExample(),
        amount: 15000,
        items: [
          { title: 'a', unitPrice: 15000, quantity: 1, tangible: false },
          { title: 'b', unitPrice: 0, quantity: 1, tangible: false },
        ],
      },
      'items.1.unitPrice',
    ],
    ['item.title empty', { ...pixExample(), items: [{ title: '', unitPrice: 15000, quantity: 1, tangible: false }] }, 'items.0.title'],
    [
      'item.title 256 characters',
      { ...pixExample(), items: [{ title: 'x'.repeat(256), unitPrice: 15000, quantity: 1, tangible: false }] },
      'items.0.title',
    ],
    [
      'item.tangible a string',
      { ...pixExample(), items: [{ title: 'Curso', unitPrice: 15000, quantity: 1, tangible: 'false' }] },
      'items.0.tangible',
    ],
    ['tangible without shipping', { ...cardExample(), amount: 15000, shipping: undefined }, 'shipping'],
    ['shipping.zipCode 123', { ...cardExample(), shipping: { ...shippingExample(), zipCode: '123' } }, 'shipping.zipCode'],
    ['shipping.state lower case', { ...cardExample(), shipping: { ...shippingExample(), state: 'sp' } }, 'shipping.state'],
    ['shipping.fee negative', { ...cardExample(), amount: 14999, shipping: { ...shippingExample(), fee: -1 } }, 'shipping.fee'],
    ['card on PIX', { ...pixExample(), card: cardExample().card }, 'card'],
    ['card on BOLETO', { ...boletoExample(), card: cardExample().card }, 'card'],
    ['no card on CREDIT_CARD', { ...cardExample(), card: undefined }, 'card'],
    ['no card on DEBIT_CARD', { ...debitExample(), card: undefined }, 'card'],
    ['Luhn failure', withCard({ number: '4111111111111112' }), 'card.number'],
    ['card number with spaces', withCard({ number: '4111 1111 1111 1111' }), 'card.number'],
    ['expired card (year)', withCard({ expirationMonth: 12, expirationYear: 2025 }), 'card.expirationYear'],
    ['expired card (month)', withCard({ expirationMonth: 10, expirationYear: 2026 }), 'card.expirationMonth'],
    ['expiration month 13', withCard({ expirationMonth: 13 }), 'card.expirationMonth'],
    ['CVV 4 digits on Visa', withCard({ cvv: '1234' }), 'card.cvv'],
    ['CVV 3 digits on Amex', withCard({ number: '378282246310005', cvv: '123' }), 'card.cvv'],
    ['debit with Amex', debitWith({ number: '378282246310005', cvv: '1234' }), 'card.number'],
    ['missing holder name', withCard({ holderName: undefined }), 'card.holderName'],
    ['installments 13', { ...cardExample(), installments: 13 }, 'installments'],
    ['installments 0', { ...cardExample(), installments: 0 }, 'installments'],
    ['installments on PIX', { ...pixExample(), installments: 1 }, 'installments'],
    ['installments on DEBIT_CARD', { ...debitExample(), installments: 1 }, 'installments'],
    ['pix.expiresInSeconds 59', { ...pixExample(), pix: { expiresInSeconds: 59 } }, 'pix.expiresInSeconds'],
    ['pix.expiresInSeconds over a year', { ...pixExample(), pix: { expiresInSeconds: 31_536_001 } }, 'pix.expiresInSeconds'],
    ['pix on a card sale', { ...cardExample(), pix: { expiresInSeconds: 3600 } }, 'pix'],
    ['boleto.dueDate in the past', boletoExample({ dueDate: '2026-11-19' }), 'boleto.dueDate'],
    ['boleto.dueDate not a calendar date', boletoExample({ dueDate: '2026-02-30' }), 'boleto.dueDate'],
    ['boleto on a PIX sale', { ...pixExample(), boleto: { dueDate: '2026-12-31' } }, 'boleto'],
    ['postbackUrl ftp://x', { ...pixExample(), postbackUrl: 'ftp://x' }, 'postbackUrl'],
    ['postbackUrl relative', { ...pixExample(), postbackUrl: '/postback' }, 'postbackUrl'],
  ];

  test('every rule broken once: 400 VALIDATION_ERROR naming exactly that field; nothing is created', async () => {
    const before = await countTransactions(gw);
    for (const [name, body, field] of cases) {
      const res = await createSale(gw, seller, body);
      assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
      const answer = res.json();
      assert.deepEqual(Object.keys(answer), ['message', 'errorType', 'details'], name);
      assert.equal(answer.errorType, 'VALIDATION_ERROR', name);
      assert.equal(typeof answer.message, 'string');
      for (const d of answer.details) {
        assert.deepEqual(Object.keys(d), ['field', 'message'], name);
        assert.equal(typeof d.message, 'string');
        assert.ok(d.message.length > 0, `${name}: a message on the detail of ${d.field}, got an empty one`);
      }
      assert.deepEqual(
        answer.details.map((d: { field: string }) => d.field),
        [field],
        `${name}: ${res.body}`,
      );
    }
    assert.equal(await countTransactions(gw), before);
  });

  test('the same bodies without the broken part are accepted (the cases above break only their rule)', async () => {
    for (const body of [pixExample(), cardExample(), debitExample(), boletoExample(), boletoExample({ dueDate: '2026-11-20' })])
      await createOk(gw, seller, body);
    await createOk(gw, seller, withCard({ number: '378282246310005', cvv: '1234' }));
    await createOk(gw, seller, { ...pixExample(), amount: 10000, items: items(100) });
    await createOk(gw, seller, { ...pixExample(), unknownField: { anything: true } });
  });

  test('several violations at once are all reported', async () => {
    const res = await createSale(gw, seller, {
      amount: '1',
      paymentMethod: 'CREDIT_CARD',
      customer: { name: '', email: 'nope', document: '123', phone: 'abc' },
      items: [{ title: 'Camiseta', unitPrice: 0, quantity: 1, tangible: true }],
      installments: 13,
      card: { number: '4111111111111112', holderName: 'X', expirationMonth: 1, expirationYear: 2020, cvv: '12' },
      postbackUrl: 'ftp://x',
    });
    assert.equal(res.statusCode, 400);
    const fields = res
      .json()
      .details.map((d: { field: string }) => d.field)
      .sort();
    for (const field of [
      'amount',
      'customer.name',
      'customer.email',
      'customer.document',
      'customer.phone',
      'items.0.unitPrice',
      'shipping',
      'installments',
      'card.number',
      'card.expirationYear',
      'card.cvv',
      'postbackUrl',
    ]) {
      assert.ok(fields.includes(field), `${field} missing from ${fields.join(', ')}`);
    }
  });

  test('malformed JSON is 400, an empty body 400, text/plain 415, over 1 MiB 413; no 500', async () => {
    const send = (payload: string, type = 'application/json') =>
      gw.app.inject({ method: 'POST', url: '/api/sales', headers: { ...seller.headers, 'content-type': type }, payload });
    const malformed = await send('{"amount": 15000,');
    assert.equal(malformed.statusCode, 400);
    assert.equal(typeof malformed.json().message, 'string');
    assert.equal((await send('')).statusCode, 400);
    const plain = await send(JSON.stringify(pixExample()), 'text/plain');
    assert.equal(plain.statusCode, 415);
    assert.equal(typeof plain.json().message, 'string');
    const form = await send('amount=15000', 'application/x-www-form-urlencoded');
    assert.equal(form.statusCode, 415);
    const huge = await send(JSON.stringify({ ...pixExample(), filler: 'x'.repeat(1024 * 1024) }));
    assert.equal(huge.statusCode, 413);
  });

  test('a NUL character in a stored text field is a 400, not a 500', async () => {
    const before = await countTransactions(gw);
    const bodies: [string, Json][] = [
      ['customer.name', { ...pixExample(), customer: { name: 'Maria\u0000Silva', email: 'maria@example.com' } }],
      ['items.0.title', { ...pixExample(), items: [{ title: 'Cur\u0000so', unitPrice: 15000, quantity: 1, tangible: false }] }],
      ['shipping.street', { ...cardExample(), shipping: { ...shippingExample(), street: 'Rua\u0000A' } }],
    ];
    for (const [field, body] of bodies) {
      const res = await createSale(gw, seller, body);
      assert.equal(res.statusCode, 400, `${field}: ${res.body}`);
      assert.ok(
        res.json().details.some((d: { field: string }) => d.field === field),
        `a detail naming ${field}, got ${res.body}`,
      );
    }
    assert.equal(await countTransactions(gw), before);
  });

  test('a lone UTF-16 surrogate in a text field is a 400 naming it; a well-formed pair (emoji) is kept', async () => {
    const before = await countTransactions(gw);
    for (const [field, text] of [
      ['customer.name', 'Maria \\ud800 Silva'],
      ['items.0.title', 'Curso \\udfff'],
      ['customer.name', 'tail \\udbff'],
    ] as const) {
      const body = JSON.stringify(
        field === 'customer.name'
          ? { ...pixExample(), customer: { name: 'PLACEHOLDER', email: 'maria@example.com' } }
          : { ...pixExample(), items: [{ title: 'PLACEHOLDER', unitPrice: 15000, quantity: 1, tangible: false }] },
      ).replace('PLACEHOLDER', text);
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/sales',
        headers: { ...seller.headers, 'content-type': 'application/json' },
        payload: body,
      });
      assert.equal(res.statusCode, 400, `${text}: ${res.body}`);
      assert.deepEqual(
        res.json().details.map((d: { field: string }) => d.field),
        [field],
      );
      assert.match(res.json().details[0].message, /well-formed Unicode/);
    }
    assert.equal(await countTransactions(gw), before);
    const emoji = JSON.stringify({ ...pixExample(), customer: { name: 'PLACEHOLDER', email: 'maria@example.com' } }).replace(
      'PLACEHOLDER',
      'Maria \\ud83d\\ude00',
    );
    const ok = await gw.app.inject({
      method: 'POST',
      url: '/api/sales',
      headers: { ...seller.headers, 'content-type': 'application/json' },
      payload: emoji,
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().sale.customer.name, 'Maria \u{1F600}');
  });

  test('junk sweep: 400+ generated bodies (fixed seed) never answer 5xx and never create a transaction', async () => {
    const before = await countTransactions(gw);
    const huge = 'x'.repeat(100_000);
    // 5000 levels of nesting, written out (JSON.stringify of it would overflow the test's own stack).
    const deepText = `${'{"a":['.repeat(2500)}1${']}'.repeat(2500)}`;
    const deep = (depth: number, leaf: unknown): unknown => (depth === 0 ? leaf : depth % 2 ? [deep(depth - 1, leaf)] : { a: deep(depth - 1, leaf) });
    const junk = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.double(),
      fc.integer({ min: -1e9, max: -1 }),
      fc.constant(-0.5),
      fc.constant(1e308),
      fc.integer().map(String),
      fc.constant('15000'),
      fc.constant(huge),
      fc.string(),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
      fc.array(fc.anything(), { maxLength: 5 }),
      fc.object({ maxDepth: 3 }),
      fc.constant(deep(200, 1)),
      fc.constant([]),
      fc.constant({}),
    );
    // Paths of required values, each with what would still be acceptable there (the junk must break the rule).
    const base = pixExample();
    const stillValid: Record<string, (v: unknown) => boolean> = {
      amount: (v) => v === 15000,
      paymentMethod: (v) => typeof v === 'string' && ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO'].includes(v),
      customer: () => false,
      'customer.name': (v) => typeof v === 'string' && v.trim() !== '' && v.length <= 200,
      'customer.email': (v) => typeof v === 'string' && /@.+\./.test(v),
      items: () => false,
      'items.0': () => false,
      'items.0.title': (v) => typeof v === 'string' && v.trim() !== '' && v.length <= 255,
      'items.0.unitPrice': (v) => v === 15000,
      'items.0.quantity': (v) => v === 1,
      'items.0.tangible': (v) => typeof v === 'boolean',
      'pix.expiresInSeconds': (v) => v === null || (typeof v === 'number' && Number.isInteger(v) && v >= 60 && v <= 31_536_000),
    };
    const setPath = (obj: Json, path: string, value: unknown): Json => {
      const copy = structuredClone(obj);
      const keys = path.split('.');
      let at: Record<string, unknown> = copy;
      for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
      at[keys[keys.length - 1]!] = value;
      return copy;
    };
    // What the server will see: JSON turns NaN into null, drops undefined, and -0 into 0.
    const asSent = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v) ?? 'null'));
    const mutated = fc
      .record({ path: fc.constantFrom(...Object.keys(stillValid)), value: junk.map(asSent), extra: fc.option(junk) })
      .filter(({ path, value }) => value !== undefined && !stillValid[path]!(value))
      .map(({ path, value, extra }) => JSON.stringify(extra === null ? setPath(base, path, value) : { ...setPath(base, path, value), extra }));
    const topLevel = fc.oneof(
      fc.constant('null'),
      fc.constant('[]'),
      fc.constant('"a string"'),
      fc.constant('15000'),
      fc.constant('true'),
      fc.array(fc.anything()).map((v) => JSON.stringify(v)),
      fc.string().map((s) => JSON.stringify(s)),
      fc.object({ maxDepth: 4 }).map((o) => JSON.stringify(o)),
      fc.constant(JSON.stringify([pixExample()])),
      fc.constant(JSON.stringify({ ...pixExample(), customer: [pixExample().customer] })),
    );
    const broken = fc.string({ minLength: 1, maxLength: 40 }).map((s) => `{"amount": ${s}`);
    const bodies = [
      ...fc.sample(mutated, { seed: 20261120, numRuns: 300 }),
      ...fc.sample(topLevel, { seed: 7, numRuns: 80 }),
      ...fc.sample(broken, { seed: 11, numRuns: 30 }),
      JSON.stringify({ ...pixExample(), customer: { name: huge, email: 'maria@example.com' } }),
      JSON.stringify({
        ...pixExample(),
        items: Array.from({ length: 5000 }, () => ({ title: huge.slice(0, 100), unitPrice: 1, quantity: 1, tangible: false })),
      }),
      JSON.stringify({ ...pixExample(), amount: 1e300 }),
      JSON.stringify({ ...pixExample(), amount: Number.MAX_SAFE_INTEGER + 2 }),
      '{"__proto__": {"amount": 15000}, "constructor": {"prototype": {}}}',
      deepText,
      `[${deepText}]`,
      JSON.stringify({ ...pixExample(), amount: 'x' }).replace('"x"', deepText),
      JSON.stringify({ ...pixExample(), customer: 'x' }).replace('"x"', deepText),
    ];
    assert.ok(bodies.length >= 400, `${bodies.length} bodies, expected 400 or more`);
    const failures: string[] = [];
    for (const payload of bodies) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/sales',
        headers: { ...seller.headers, 'content-type': 'application/json' },
        payload,
      });
      if (![400, 413, 415].includes(res.statusCode)) failures.push(`${res.statusCode} for ${payload.slice(0, 200)}: ${res.body.slice(0, 200)}`);
      else if (res.statusCode === 400 && res.json().errorType !== undefined && res.json().errorType !== 'VALIDATION_ERROR')
        failures.push(`errorType ${res.body.slice(0, 200)}`);
    }
    assert.deepEqual(failures, []);
    assert.equal(await countTransactions(gw), before);
  });
});

describe('card data is never kept or logged', () => {
  let gw: Gateway;
  const logs: string[] = [];
  before(async () => {
    const logStream = new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    });
    gw = await startGateway({ clock: { now: () => START }, env: { LOG_LEVEL: 'debug' }, logStream });
  });
  after(async () => {
    await gw.close();
  });

  test('only brand, last four and a 64-hex fingerprint; never the PAN or the CVV, in any table or log line', async () => {
    const seller = await gw.createSeller();
    const visa = await createOk(gw, seller, cardExample('4111111111111111', '123'));
    const master = await createOk(gw, seller, {
      ...debitExample(),
      card: { ...(debitExample().card as Json), number: '5555555555554444', cvv: '987' },
    });
    const visaAgain = await createOk(gw, seller, { ...cardExample('4111111111111111', '456'), installments: 1 });
    // with an Idempotency-Key (the stored answer and hash must not hold the card either), and a refused one
    const keyed = await createSale(gw, seller, cardExample('5555555555554444', '987'), { 'idempotency-key': 'card-key-1' });
    assert.equal(keyed.statusCode, 201);
    const refused = await createSale(
      gw,
      seller,
      { ...cardExample('4111111111111111', '987'), card: { ...(cardExample().card as Json), cvv: '9876' } },
      { 'idempotency-key': 'card-key-2' },
    );
    assert.equal(refused.statusCode, 400);
    for (const res of [keyed, refused])
      assert.ok(
        !res.body.includes('4111111111111111') && !res.body.includes('5555555555554444') && !res.body.includes('"cvv"'),
        `no card number or CVV in the answer, got ${res.body.slice(0, 300)}`,
      );
    // admin move, so the autopilot/operator paths log too
    await gw.app.inject({
      method: 'POST',
      url: `/admin/transactions/${visa.id}/events`,
      headers: adminHeaders,
      payload: { event: 'SENT_TO_PROCESSOR' },
    });
    await readTransaction(gw, seller, master.id);

    const tables = (
      await gw.ctx.db.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
      )
    ).rows.map((r) => r.table_name);
    assert.ok(
      tables.includes('transactions') && tables.includes('idempotency_keys'),
      `the dump covers transactions and idempotency_keys: ${tables.join(', ')}`,
    );
    const dump: string[] = [];
    for (const table of tables) {
      assert.match(table, /^[a-z_][a-z0-9_]*$/);
      const rows = await gw.ctx.db.query<{ t: string }>(`SELECT t::text AS t FROM "${table}" t`);
      dump.push(...rows.rows.map((r) => `${table}: ${r.t}`));
    }
    assert.ok(
      dump.some((line) => line.startsWith('transactions:')),
      `the dump holds the transactions (${dump.length} rows)`,
    );
    for (const line of dump) {
      for (const pan of ['4111111111111111', '5555555555554444']) assert.ok(!line.includes(pan), `PAN stored: ${line.slice(0, 300)}`);
      assert.ok(!/"cvv"/i.test(line), `CVV stored: ${line.slice(0, 300)}`);
    }
    // An attacker with the dump who knows everything of the keyed card sale but its CVV (far less
    // than BIN + last four leave unknown) tries every CVV against every digest form a plain hash
    // could take: nothing in the dump matches, because the stored fingerprint is keyed.
    const keyedBody = cardExample('5555555555554444', '987');
    const digests = (cvv: string) => {
      const text = canonicalJson({ ...keyedBody, card: { ...(keyedBody.card as Json), cvv } });
      return [createHash('sha256').update(text).digest('hex'), createHash('sha256').update(text).digest('base64')];
    };
    const searchable = dump.join('\n');
    assert.ok(
      digests('987').every((d) => d.length > 40),
      'the search has something to find',
    );
    for (let cvv = 0; cvv < 1000; cvv++) {
      for (const d of digests(String(cvv).padStart(3, '0'))) assert.ok(!searchable.includes(d), `a plain digest of the body (CVV ${cvv}) is stored`);
    }

    const log = logs.join('');
    assert.ok(log.includes('/api/sales'), 'the debug log captured the requests');
    for (const pan of ['4111111111111111', '5555555555554444']) assert.ok(!log.includes(pan), 'PAN in the logs');
    assert.ok(!/"cvv"\s*:\s*"(?!\[redacted\])/.test(log), 'CVV value in the logs');
    for (const cvv of ['"123"', '"987"', '"456"', '"9876"']) assert.ok(!log.includes(`"cvv":${cvv}`), `CVV ${cvv} in the logs`);

    const rows = (
      await gw.ctx.db.query<{ id: number; card_brand: string; card_last_four: string; card_fingerprint: string }>(
        'SELECT id, card_brand, card_last_four, card_fingerprint FROM transactions WHERE id = ANY($1::bigint[]) ORDER BY id',
        [[visa.id, master.id, visaAgain.id, keyed.json().sale.id]],
      )
    ).rows;
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const [v, m, v2, m2] = [byId.get(visa.id)!, byId.get(master.id)!, byId.get(visaAgain.id)!, byId.get(keyed.json().sale.id)!];
    assert.deepEqual([v.card_brand, v.card_last_four], ['VISA', '1111']);
    assert.deepEqual([m.card_brand, m.card_last_four], ['MASTERCARD', '4444']);
    for (const r of rows) assert.match(r.card_fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(v.card_fingerprint, v2.card_fingerprint, 'same card, same fingerprint (whatever the CVV)');
    assert.equal(m.card_fingerprint, m2.card_fingerprint);
    assert.notEqual(v.card_fingerprint, m.card_fingerprint);
  });
});
