import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { hasError, isDynamicPix, isStaticPix, parsePix } from 'pix-utils';
import {
  assembleBrCode,
  type BrCodeInput,
  buildBrCode,
  crc16ccittFalse,
  MERCHANT_FIELD_MAX,
  merchantField,
  newTxid,
  parseBrCode,
  parseTlv,
  tlv,
  verifyBrCodeCrc,
} from '../../src/domain/pix-brcode.ts';

// Vectors from BRAZIL.md, "PIX BR Code".
const BCB_STATIC =
  '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D';
const CPF_STATIC =
  '00020126470014br.gov.bcb.pix0111123456789090210Pedido 123520400005303986540510.505802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62130509PEDIDO12363042C15';
const DYNAMIC =
  '00020101021226760014br.gov.bcb.pix2554pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR5913FULANO DE TAL6008BRASILIA62070503***630493EF';
const GUI = tlv('00', 'br.gov.bcb.pix');
const EVP = '123e4567-e12b-12d1-a456-426655440000';

function bcbStaticFields(amount?: string): Array<[string, string]> {
  return [
    ['00', '01'],
    ['26', GUI + tlv('01', EVP)],
    ['52', '0000'],
    ['53', '986'],
    ...(amount ? [['54', amount] as [string, string]] : []),
    ['58', 'BR'],
    ['59', 'Fulano de Tal'],
    ['60', 'BRASILIA'],
    ['62', tlv('05', '***')],
  ];
}

const base: BrCodeInput = {
  key: EVP,
  amountCents: 1050,
  merchantName: 'Loja Exemplo Ltda',
  merchantCity: 'Sao Paulo',
  txid: 'ABC123',
};

/** pix-utils is an independent parser: it checks the TLV frame and the CRC. */
function oracle(code: string) {
  const parsed = parsePix(code);
  if (hasError(parsed)) assert.fail(`pix-utils rejects ${code}: ${parsed.message}`);
  return parsed;
}

test('CRC-16/CCITT-FALSE check value', () => {
  assert.equal(crc16ccittFalse('123456789'), '29B1');
  assert.equal(crc16ccittFalse(''), 'FFFF');
});

test('BCB manual static vector, byte for byte', () => {
  assert.equal(assembleBrCode(bcbStaticFields()), BCB_STATIC);
});

test('BCB manual static with 54041.00: CRC B836', () => {
  const code = assembleBrCode(bcbStaticFields('1.00'));
  assert.equal(code, `${BCB_STATIC.replace('5303986', '530398654041.00').slice(0, -4)}B836`);
  assert.ok(code.endsWith('6304B836'));
});

test('CPF key, description, amount, txid vector: by fields and by buildBrCode', () => {
  const fields: Array<[string, string]> = [
    ['00', '01'],
    ['26', GUI + tlv('01', '12345678909') + tlv('02', 'Pedido 123')],
    ['52', '0000'],
    ['53', '986'],
    ['54', '10.50'],
    ['58', 'BR'],
    ['59', 'LOJA EXEMPLO LTDA'],
    ['60', 'SAO PAULO'],
    ['62', tlv('05', 'PEDIDO123')],
  ];
  assert.equal(assembleBrCode(fields), CPF_STATIC);
  const built = buildBrCode({
    key: '12345678909',
    amountCents: 1050,
    merchantName: 'Loja Exemplo Ltda',
    merchantCity: 'São Paulo',
    txid: 'PEDIDO123',
    description: 'Pedido 123',
  });
  assert.equal(built, CPF_STATIC);
});

test('dynamic vector, byte for byte', () => {
  const code = assembleBrCode([
    ['00', '01'],
    ['01', '12'],
    ['26', GUI + tlv('25', 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25')],
    ['52', '0000'],
    ['53', '986'],
    ['58', 'BR'],
    ['59', 'FULANO DE TAL'],
    ['60', 'BRASILIA'],
    ['62', tlv('05', '***')],
  ]);
  assert.equal(code, DYNAMIC);
});

test('every vector parses, has a valid CRC, and pix-utils agrees', () => {
  for (const code of [BCB_STATIC, assembleBrCode(bcbStaticFields('1.00')), CPF_STATIC, DYNAMIC]) {
    assert.ok(verifyBrCodeCrc(code), code);
    const fields = parseBrCode(code);
    assert.equal(fields.get('00'), '01');
    assert.equal(fields.get('63'), code.slice(-4));
    oracle(code);
  }
  const dyn = oracle(DYNAMIC);
  assert.ok(isDynamicPix(dyn));
  assert.equal(dyn.url, 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25');
  const cpf = oracle(CPF_STATIC);
  assert.ok(isStaticPix(cpf));
  assert.deepEqual([cpf.pixKey, cpf.infoAdicional, cpf.transactionAmount, cpf.txid], ['12345678909', 'Pedido 123', 10.5, 'PEDIDO123']);
});

test('trap: field 62 declaring 08 over 7 characters is malformed, even with a matching CRC', () => {
  // BRAZIL.md's widely copied example (ending 170E) is not quoted in full; this rebuilds its defect
  // on the BCB vector: `6208` before the 7-character `0503***`, CRC recomputed over the bad text.
  const body = `${BCB_STATIC.slice(0, -8).replace('62070503***', '62080503***')}6304`;
  const trap = body + crc16ccittFalse(body);
  assert.ok(verifyBrCodeCrc(trap), 'the CRC alone does not reveal it');
  assert.throws(() => parseBrCode(trap), /BR Code: (field|bad TLV)/);
  // Read with the declared length, 62 swallows the `6` of `6304` and the frame breaks.
  assert.throws(() => parseTlv('0503***6'), /BR Code/);
});

test('parser rejects bad frames and a changed character fails the CRC', () => {
  assert.throws(() => parseBrCode('0002026304ABCD'), /000201/);
  assert.throws(() => parseBrCode(BCB_STATIC.slice(0, -8)), /6304/);
  assert.throws(() => parseBrCode(`${BCB_STATIC}0000`), /BR Code/);
  assert.throws(() => parseTlv('0003AB'), /declares 3/);
  assert.throws(() => parseTlv('000201'.repeat(2)), /duplicate/);
  assert.throws(() => parseTlv('0x02ab'), /header/);
  const tampered = BCB_STATIC.replace('Fulano', 'Fulana');
  assert.equal(verifyBrCodeCrc(tampered), false);
  assert.equal(verifyBrCodeCrc('6304'), false);
  assert.equal(verifyBrCodeCrc(BCB_STATIC.toLowerCase()), false);
});

test('buildBrCode round-trips through pix-utils: key, amount, name, city, txid', () => {
  for (const [cents, text] of [
    [1, '0.01'],
    [100, '1.00'],
    [1050, '10.50'],
    [123456789, '1234567.89'],
    [999999999999, '9999999999.99'],
  ] as const) {
    const code = buildBrCode({ ...base, amountCents: cents });
    assert.equal(parseBrCode(code).get('54'), text);
    const parsed = oracle(code);
    assert.ok(isStaticPix(parsed));
    assert.equal(parsed.pixKey, EVP);
    assert.equal(parsed.transactionAmount, Number(text));
    assert.equal(parsed.merchantName, 'LOJA EXEMPLO LTDA');
    assert.equal(parsed.merchantCity, 'SAO PAULO');
    assert.equal(parsed.txid, 'ABC123');
  }
});

test('field order, no amount, txid ***, and keys of every DICT type', () => {
  const code = buildBrCode({ ...base, amountCents: null, txid: '***' });
  const fields = parseBrCode(code);
  assert.deepEqual([...fields.keys()], ['00', '26', '52', '53', '58', '59', '60', '62', '63']);
  assert.equal(fields.get('62'), '0503***');
  assert.equal(parseBrCode(buildBrCode({ ...base, amountCents: undefined })).has('54'), false);
  for (const key of ['52998224725', '11222333000181', '+5511987654321', 'fulano@example.com', EVP, `${'a'.repeat(65)}@example.com`]) {
    const parsed = oracle(buildBrCode({ ...base, key }));
    assert.ok(isStaticPix(parsed));
    assert.equal(parsed.pixKey, key);
  }
});

test('names and cities: accents removed, upper case, [A-Z0-9 ] only, truncated to 25 / 15', () => {
  const cases: Array<[string, string, string, string]> = [
    ['José da Conceição & Filhos', 'São João del-Rei', 'JOSE DA CONCEICAO FILHOS', 'SAO JOAO DEL RE'],
    ['Padaria Pão de Açúcar Ltda ME', 'Florianópolis', 'PADARIA PAO DE ACUCAR LTD', 'FLORIANOPOLIS'],
    ['  ÁÉÍÓÚ âêô ãõ à ü ñ  ', 'Itaú', 'AEIOU AEO AO A U N', 'ITAU'],
    ['Loja 123 (Centro)', 'Rio de Janeiro - RJ', 'LOJA 123 CENTRO', 'RIO DE JANEIRO'],
    ['Øresund 北京 Café', 'Guarujá', 'RESUND CAFE', 'GUARUJA'],
  ];
  for (const [name, city, wantName, wantCity] of cases) {
    const fields = parseBrCode(buildBrCode({ ...base, merchantName: name, merchantCity: city }));
    assert.equal(fields.get('59'), wantName);
    assert.equal(fields.get('60'), wantCity);
    assert.ok(fields.get('59')!.length <= 25 && fields.get('60')!.length <= 15);
  }
  const long = parseBrCode(buildBrCode({ ...base, merchantName: 'A'.repeat(40), merchantCity: 'B'.repeat(40) }));
  assert.equal(long.get('59'), 'A'.repeat(25));
  assert.equal(long.get('60'), 'B'.repeat(15));
});

test('merchantField: the one rule for fields 59 and 60, strict for start-up, cut to fit for the builder', () => {
  assert.deepEqual(MERCHANT_FIELD_MAX, { merchantName: 25, merchantCity: 15 });
  assert.deepEqual(merchantField('merchantName', 'José & Filhos'), { ok: true, value: 'JOSE FILHOS' });
  assert.deepEqual(merchantField('merchantCity', 'C'.repeat(15)), { ok: true, value: 'C'.repeat(15) });
  for (const text of ['!!! ***', '', '   ', '北京', '— –', '🙂']) {
    for (const field of ['merchantName', 'merchantCity'] as const) {
      const r = merchantField(field, text);
      assert.ok(!r.ok && /no letter or digit/.test(r.refusal.message), `${field} ${JSON.stringify(text)}`);
      assert.equal(merchantField(field, text, { cut: true }).ok, false);
      assert.throws(() => buildBrCode({ ...base, [field]: text }), new RegExp(`BR Code: ${field} has no letter or digit`));
    }
  }
  const long = merchantField('merchantCity', 'São João del-Rei');
  assert.ok(!long.ok && long.refusal.message.includes('at most 15') && long.refusal.message.includes('"SAO JOAO DEL REI" is 16'));
  assert.deepEqual(merchantField('merchantCity', 'São João del-Rei', { cut: true }), { ok: true, value: 'SAO JOAO DEL RE' });
  assert.deepEqual(merchantField('merchantName', 'Café -- Cia. -- Ltda. ---- ME'), { ok: true, value: 'CAFE CIA LTDA ME' });
});

test('merchantField: the builder throws exactly when the rule refuses, and writes what it answers (property)', () => {
  const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 40 }));
  fc.assert(
    fc.property(text, (t) => {
      const name = merchantField('merchantName', t, { cut: true });
      const city = merchantField('merchantCity', t, { cut: true });
      const strict = merchantField('merchantName', t);
      if (strict.ok) assert.deepEqual(name, strict, 'strict and cut agree on what fits');
      if (!name.ok) {
        assert.throws(() => buildBrCode({ ...base, merchantName: t }), /merchantName/);
        return;
      }
      assert.ok(city.ok, 'the same text cannot be empty for one field and not the other');
      const fields = parseBrCode(buildBrCode({ ...base, merchantName: t, merchantCity: t }));
      assert.equal(fields.get('59'), name.value);
      assert.equal(fields.get('60'), city.value);
    }),
    { numRuns: 500 },
  );
});

test('description: ASCII, cut to fit the 99-character merchant account', () => {
  const code = buildBrCode({ ...base, key: 'k'.repeat(50), description: `Pedido nº 42 – café ${'x'.repeat(100)}` });
  assert.equal(parseBrCode(code).get('26')!.length, 99);
  // 99 − GUI (18) − key (4 + 50) − description header (4) leaves 23 characters.
  assert.equal(parseTlv(parseBrCode(code).get('26')!).get('02'), 'Pedido n 42 cafe xxxxxx');
  oracle(code);
  const noRoom = buildBrCode({ ...base, key: 'k'.repeat(77), description: 'x' });
  assert.equal(parseTlv(parseBrCode(noRoom).get('26')!).has('02'), false);
  const blank = buildBrCode({ ...base, description: '  ' });
  assert.equal(parseTlv(parseBrCode(blank).get('26')!).has('02'), false);
});

test('bugs throw: txid, key, amount, empty names, TLV limits', () => {
  for (const txid of ['', 'abc-def', 'A'.repeat(26), 'ção', '**']) {
    assert.throws(() => buildBrCode({ ...base, txid }), /txid/);
  }
  assert.doesNotThrow(() => buildBrCode({ ...base, txid: 'A'.repeat(25) }));
  assert.throws(() => buildBrCode({ ...base, key: 'k'.repeat(78) }), /key length/);
  assert.throws(() => buildBrCode({ ...base, key: '' }), /key length/);
  for (const amountCents of [0, -1, 10.5, NaN, Infinity, 1e12]) {
    assert.throws(() => buildBrCode({ ...base, amountCents }), /amount/);
  }
  assert.throws(() => buildBrCode({ ...base, merchantName: '***' }), /merchantName/);
  assert.throws(() => buildBrCode({ ...base, merchantCity: '' }), /merchantCity/);
  assert.throws(() => tlv('26', 'x'.repeat(100)), /length 100/);
  assert.throws(() => tlv('26', ''), /length 0/);
  assert.throws(() => tlv('5', 'x'), /field id/);
  assert.throws(() => tlv('59', 'JOSÉ'), /printable ASCII/);
  assert.equal(tlv('26', 'x'.repeat(99)).slice(0, 4), '2699');
});

test('newTxid: 25 chars [A-Za-z0-9], unique over 10k calls', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const txid = newTxid();
    assert.match(txid, /^[A-Za-z0-9]{25}$/);
    seen.add(txid);
  }
  assert.equal(seen.size, 10_000);
  // Every alphabet character shows up: the rejection sampling covers all 62 values.
  assert.equal(new Set([...seen].join('')).size, 62);
});
