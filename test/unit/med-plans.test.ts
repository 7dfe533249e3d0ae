// What a MED 2.0 infraction does to its sale (CONTRACT §11.5, §14), as a pure plan: the sale moves
// to what the infraction's latest status asks for, never back, whatever order the PSP tells it in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SaleSnapshot } from '../../src/domain/fact-plans.ts';
import { latestStatus, planInfraction } from '../../src/domain/med-plans.ts';
import type { Fact, InfractionStatus } from '../../src/domain/provider-facts.ts';
import type { TransactionEvent, TransactionStatus } from '../../src/domain/transaction-states.ts';

type Infraction = Extract<Fact, { kind: 'INFRACTION' }>;

const sale = (status: TransactionStatus, extra: Partial<SaleSnapshot> = {}): SaleSnapshot => ({
  id: 1,
  status,
  paymentMethod: 'PIX',
  lastEvent: null,
  amount: 15000,
  refundPending: false,
  captureAsked: false,
  paidBy: 'E00000000202611281200abcdefghijk',
  ...extra,
});

const fact = (status: InfractionStatus, extra: Partial<Infraction> = {}): Infraction => ({
  kind: 'INFRACTION',
  sale: { ids: ['E00000000202611281200abcdefghijk'], saleId: null, referenceSuffices: false },
  infractionId: 'INF1',
  endToEndId: 'E00000000202611281200abcdefghijk',
  account: 'api-pix:sandbox',
  status,
  amount: 15000,
  reason: 'golpe',
  openedAt: null,
  deadline: null,
  defense: null,
  ...extra,
});

const summary = (p: ReturnType<typeof planInfraction>) => ({ state: p.state, events: p.events });
const applied = (...events: TransactionEvent[]) => ({ state: 'applied', events });

describe('MED 2.0: the plan of an infraction', () => {
  test('open, defended or accepted: a PAGO sale goes to MED; one in MED stays', () => {
    for (const status of ['ABERTA', 'EM_DEFESA', 'ACEITA'] as const) {
      assert.deepEqual(summary(planInfraction(fact(status), sale('PAGO'), null)), applied('MED_OPENED'), status);
      assert.deepEqual(summary(planInfraction(fact(status), sale('MED', { lastEvent: 'MED_OPENED' }), 'ABERTA')), applied(), status);
    }
  });

  test('rejected or cancelled: a sale in MED is released; a PAGO one (never blocked, or released already) changes nothing', () => {
    for (const status of ['REJEITADA', 'CANCELADA'] as const) {
      assert.deepEqual(summary(planInfraction(fact(status), sale('MED', { lastEvent: 'MED_OPENED' }), 'EM_DEFESA')), applied('MED_WON'));
      assert.deepEqual(summary(planInfraction(fact(status), sale('PAGO'), null)), applied());
      assert.deepEqual(summary(planInfraction(fact(status), sale('PAGO', { lastEvent: 'MED_WON' }), 'ABERTA')), applied());
    }
  });

  test('a late word never moves the sale back: an opening told after the rejection changes nothing', () => {
    assert.equal(latestStatus('REJEITADA', 'ABERTA'), 'REJEITADA');
    assert.equal(latestStatus('EM_DEFESA', 'ABERTA'), 'EM_DEFESA');
    assert.equal(latestStatus('ABERTA', 'ACEITA'), 'ACEITA');
    assert.equal(latestStatus('ACEITA', 'REJEITADA'), 'ACEITA', 'the first decision stands');
    assert.deepEqual(summary(planInfraction(fact('ABERTA'), sale('PAGO', { lastEvent: 'MED_WON' }), 'REJEITADA')), applied());
    assert.deepEqual(summary(planInfraction(fact('EM_DEFESA'), sale('PAGO'), 'CANCELADA')), applied());
  });

  test('a rejection releases the block only when no other infraction of the sale is still open or accepted', () => {
    const inMed = sale('MED', { lastEvent: 'MED_OPENED' });
    assert.deepEqual(summary(planInfraction(fact('REJEITADA'), inMed, 'EM_DEFESA', true)), applied());
    assert.deepEqual(summary(planInfraction(fact('REJEITADA'), inMed, 'EM_DEFESA', false)), applied('MED_WON'));
  });

  test('before the payment is recorded, or while a refund is pending, the opening waits (held)', () => {
    for (const status of ['PENDENTE', 'EM_PROCESSAMENTO', 'FALHA'] as const)
      assert.equal(planInfraction(fact('ABERTA'), sale(status), null).state, 'held', status);
    assert.equal(planInfraction(fact('ABERTA'), sale('PAGO', { refundPending: true }), null).state, 'held');
    assert.equal(planInfraction(fact('REJEITADA'), sale('MED', { refundPending: true }), 'ABERTA').state, 'applied', 'a release is no refund');
  });

  test('a sale whose money already went back cannot take a MED: the operator is told, nothing moves', () => {
    const refunded = planInfraction(fact('ABERTA'), sale('ESTORNADO', { lastEvent: 'REFUNDED' }), null);
    assert.deepEqual(summary(refunded), { state: 'needs_operator', events: [] });
    assert.match(refunded.reason!, /already returned/);
    assert.equal(planInfraction(fact('ABERTA'), sale('CANCELADO'), null).state, 'needs_operator');
    assert.equal(planInfraction(fact('ABERTA'), sale('PAGO', { paymentMethod: 'BOLETO' }), null).state, 'needs_operator', 'MED is PIX only');
    assert.deepEqual(
      summary(planInfraction(fact('ACEITA'), sale('ESTORNADO', { lastEvent: 'MED_LOST' }), 'ABERTA')),
      applied(),
      'the devolução came first',
    );
  });

  test('accepted with no devolução in 11 days: the operator, while the sale is still in MED', () => {
    const overdue = fact('ACEITA', { overdue: true });
    const shown = planInfraction(overdue, sale('MED', { lastEvent: 'MED_OPENED' }), 'ACEITA');
    assert.deepEqual(summary(shown), { state: 'needs_operator', events: [] });
    assert.match(shown.reason!, /11 days/);
    assert.deepEqual(summary(planInfraction(overdue, sale('ESTORNADO', { lastEvent: 'MED_LOST' }), 'ACEITA')), applied());
    const stale = planInfraction(fact('EM_DEFESA', { overdue: true }), sale('MED', { lastEvent: 'MED_OPENED' }), 'EM_DEFESA');
    assert.equal(stale.state, 'needs_operator');
    assert.match(stale.reason!, /undecided 30 days past its deadline/);
    assert.deepEqual(summary(planInfraction(fact('EM_DEFESA', { overdue: true }), sale('PAGO'), 'REJEITADA')), applied(), 'decided since');
  });
});
