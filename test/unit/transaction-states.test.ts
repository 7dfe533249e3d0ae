import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  applyTransactionEvent,
  FINAL_STATUSES,
  isFinalStatus,
  isNotifyingStatus,
  NOTIFYING_STATUSES,
  PAYMENT_METHODS,
  type PaymentMethod,
  postingKind,
  TRANSACTION_EVENTS,
  TRANSACTION_STATUSES,
  TRANSACTION_TRANSITIONS,
  type TransactionEvent,
  type TransactionStatus,
} from '../../src/domain/transaction-states.ts';

// Written out again from the spec's table and CONTRACT §6, independently of the module's data.
const ALL = ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO'];
const CARDS = ['CREDIT_CARD', 'DEBIT_CARD'];
const LEGAL: [from: string, event: string, to: string, methods: string[]][] = [
  ['PENDENTE', 'PAYMENT_CONFIRMED', 'PAGO', ALL],
  ['PENDENTE', 'SENT_TO_PROCESSOR', 'EM_PROCESSAMENTO', CARDS],
  ['PENDENTE', 'PROCESSING_ERROR', 'FALHA', ALL],
  ['PENDENTE', 'CANCELLED', 'CANCELADO', ALL],
  ['PENDENTE', 'EXPIRED', 'CANCELADO', ['PIX', 'BOLETO']],
  ['EM_PROCESSAMENTO', 'APPROVED', 'PAGO', ALL],
  ['EM_PROCESSAMENTO', 'DECLINED', 'RECUSADO', ALL],
  ['EM_PROCESSAMENTO', 'PROCESSING_ERROR', 'FALHA', ALL],
  ['PAGO', 'REFUNDED', 'ESTORNADO', ALL],
  ['PAGO', 'CHARGEBACK_OPENED', 'CHARGEBACK', CARDS],
  ['PAGO', 'MED_OPENED', 'MED', ['PIX']],
  ['FALHA', 'RETRY_PROCESSED', 'PAGO', ALL],
  ['FALHA', 'CANCELLED', 'CANCELADO', ALL],
  ['CHARGEBACK', 'CHARGEBACK_REVERTED', 'PAGO', ALL],
  ['CHARGEBACK', 'CHARGEBACK_CONFIRMED', 'ESTORNADO', ALL],
  ['MED', 'MED_WON', 'PAGO', ALL],
  ['MED', 'MED_LOST', 'ESTORNADO', ALL],
];

function expectedMove(from: string, event: string, method: string): string | null {
  const row = LEGAL.find(([f, e]) => f === from && e === event);
  return row?.[3].includes(method) ? row[2] : null;
}

function targetOf(event: string): string {
  const targets = new Set(LEGAL.filter(([, e]) => e === event).map(([, , to]) => to));
  assert.equal(targets.size, 1, `${event} has one target`);
  return [...targets][0]!;
}

const state = (status: TransactionStatus, paymentMethod: PaymentMethod, lastEvent: TransactionEvent | null = null) => ({
  status,
  paymentMethod,
  lastEvent,
});

describe('transaction vocabulary', () => {
  it("has the spec's nine statuses, four methods and fifteen events", () => {
    assert.deepEqual([...TRANSACTION_STATUSES].sort(), [
      'CANCELADO',
      'CHARGEBACK',
      'EM_PROCESSAMENTO',
      'ESTORNADO',
      'FALHA',
      'MED',
      'PAGO',
      'PENDENTE',
      'RECUSADO',
    ]);
    assert.deepEqual([...PAYMENT_METHODS].sort(), [...ALL].sort());
    assert.equal(TRANSACTION_EVENTS.length, 15);
    assert.deepEqual([...TRANSACTION_EVENTS].sort(), [...new Set(LEGAL.map(([, e]) => e))].sort());
  });

  it('has one table row per event', () => {
    assert.deepEqual(TRANSACTION_TRANSITIONS.map((r) => r.event).sort(), [...TRANSACTION_EVENTS].sort());
  });

  it('final statuses are CANCELADO, RECUSADO, ESTORNADO and nothing leaves them', () => {
    assert.deepEqual([...FINAL_STATUSES].sort(), ['CANCELADO', 'ESTORNADO', 'RECUSADO']);
    for (const s of TRANSACTION_STATUSES) {
      const leaves = TRANSACTION_TRANSITIONS.some((r) => r.from.includes(s));
      assert.equal(isFinalStatus(s), !leaves, s);
    }
  });

  it('every status but PENDENTE and EM_PROCESSAMENTO notifies', () => {
    assert.deepEqual([...NOTIFYING_STATUSES].sort(), ['CANCELADO', 'CHARGEBACK', 'ESTORNADO', 'FALHA', 'MED', 'PAGO', 'RECUSADO']);
    for (const s of TRANSACTION_STATUSES) assert.equal(isNotifyingStatus(s), s !== 'PENDENTE' && s !== 'EM_PROCESSAMENTO', s);
  });
});

describe('applyTransactionEvent: every legal move', () => {
  for (const [from, event, to, methods] of LEGAL) {
    for (const method of methods) {
      it(`${from} --${event}--> ${to} (${method})`, () => {
        const r = applyTransactionEvent(state(from as TransactionStatus, method as PaymentMethod), event as TransactionEvent);
        assert.deepEqual(r, { kind: 'moved', from, to });
      });
    }
  }
});

describe('applyTransactionEvent: method restrictions', () => {
  const cases: [TransactionStatus, TransactionEvent, PaymentMethod][] = [
    ['PENDENTE', 'SENT_TO_PROCESSOR', 'PIX'],
    ['PENDENTE', 'SENT_TO_PROCESSOR', 'BOLETO'],
    ['PAGO', 'CHARGEBACK_OPENED', 'PIX'],
    ['PAGO', 'CHARGEBACK_OPENED', 'BOLETO'],
    ['PAGO', 'MED_OPENED', 'CREDIT_CARD'],
    ['PAGO', 'MED_OPENED', 'DEBIT_CARD'],
    ['PAGO', 'MED_OPENED', 'BOLETO'],
    ['PENDENTE', 'EXPIRED', 'CREDIT_CARD'],
    ['PENDENTE', 'EXPIRED', 'DEBIT_CARD'],
  ];
  for (const [status, event, method] of cases) {
    it(`${status} --${event}--> refused for ${method}`, () => {
      const r = applyTransactionEvent(state(status, method), event);
      assert.equal(r.kind, 'refused');
      assert.match(r.kind === 'refused' ? r.reason : '', new RegExp(method));
    });
  }
});

describe('applyTransactionEvent: exhaustive', () => {
  it('every (status, event, method, lastEvent) answers as the independent table says', () => {
    let moved = 0;
    let noops = 0;
    let refused = 0;
    for (const status of TRANSACTION_STATUSES) {
      for (const event of TRANSACTION_EVENTS) {
        for (const method of PAYMENT_METHODS) {
          for (const lastEvent of [null, ...TRANSACTION_EVENTS]) {
            const r = applyTransactionEvent(state(status, method, lastEvent), event);
            const where = `${status} ${event} ${method} last=${lastEvent}`;
            if (event === lastEvent && status === targetOf(event)) {
              assert.deepEqual(r, { kind: 'noop' }, where);
              noops++;
              continue;
            }
            const to = expectedMove(status, event, method);
            if (to === null) {
              assert.equal(r.kind, 'refused', where);
              refused++;
            } else {
              assert.deepEqual(r, { kind: 'moved', from: status, to }, where);
              moved++;
            }
          }
        }
      }
    }
    assert.equal(moved + noops + refused, 9 * 15 * 4 * 16);
    assert.ok(moved > 0 && noops > 0 && refused > 0);
  });

  it('refusals explain themselves', () => {
    const r = applyTransactionEvent(state('CANCELADO', 'PIX'), 'PAYMENT_CONFIRMED');
    assert.deepEqual(r, { kind: 'refused', reason: 'event PAYMENT_CONFIRMED is not allowed from status CANCELADO' });
  });
});

describe('applyTransactionEvent: repeating the last event', () => {
  it('is a noop while still in its target status', () => {
    assert.deepEqual(applyTransactionEvent(state('PAGO', 'PIX', 'PAYMENT_CONFIRMED'), 'PAYMENT_CONFIRMED'), { kind: 'noop' });
    assert.deepEqual(applyTransactionEvent(state('CANCELADO', 'BOLETO', 'EXPIRED'), 'EXPIRED'), { kind: 'noop' });
    assert.deepEqual(applyTransactionEvent(state('ESTORNADO', 'CREDIT_CARD', 'CHARGEBACK_CONFIRMED'), 'CHARGEBACK_CONFIRMED'), { kind: 'noop' });
  });

  it('is refused when a different event led to the same status', () => {
    // CANCELADO by expiry, then a manual cancel: not the last event, and CANCELADO is final.
    assert.equal(applyTransactionEvent(state('CANCELADO', 'PIX', 'EXPIRED'), 'CANCELLED').kind, 'refused');
    assert.equal(applyTransactionEvent(state('PAGO', 'CREDIT_CARD', 'APPROVED'), 'PAYMENT_CONFIRMED').kind, 'refused');
  });

  it("is refused when the status is not that event's target (defensive: rows out of step)", () => {
    assert.equal(applyTransactionEvent(state('ESTORNADO', 'PIX', 'PAYMENT_CONFIRMED'), 'PAYMENT_CONFIRMED').kind, 'refused');
  });

  it('a second MED after a won MED is a real move, not a noop', () => {
    assert.deepEqual(applyTransactionEvent(state('PAGO', 'PIX', 'MED_WON'), 'MED_OPENED'), { kind: 'moved', from: 'PAGO', to: 'MED' });
  });
});

describe('typical flows', () => {
  function run(method: PaymentMethod, events: TransactionEvent[]): TransactionStatus {
    let current = state('PENDENTE', method);
    for (const event of events) {
      const r = applyTransactionEvent(current, event);
      assert.equal(r.kind, 'moved', `${current.status} ${event}`);
      if (r.kind === 'moved') current = { ...current, status: r.to, lastEvent: event };
    }
    return current.status;
  }

  it('PIX: paid, MED opened and won, MED opened again and lost', () => {
    assert.equal(run('PIX', ['PAYMENT_CONFIRMED', 'MED_OPENED', 'MED_WON', 'MED_OPENED', 'MED_LOST']), 'ESTORNADO');
  });
  it('boleto expires', () => assert.equal(run('BOLETO', ['EXPIRED']), 'CANCELADO'));
  it('card: processor, error, retry, chargeback reverted, refund', () => {
    assert.equal(
      run('CREDIT_CARD', ['SENT_TO_PROCESSOR', 'PROCESSING_ERROR', 'RETRY_PROCESSED', 'CHARGEBACK_OPENED', 'CHARGEBACK_REVERTED', 'REFUNDED']),
      'ESTORNADO',
    );
  });
  it('debit card declined', () => assert.equal(run('DEBIT_CARD', ['SENT_TO_PROCESSOR', 'DECLINED']), 'RECUSADO'));
});

describe('postingKind', () => {
  const EXPECTED: Record<string, string> = {
    'PENDENTE>PAGO': 'FIRST_PAYMENT',
    'EM_PROCESSAMENTO>PAGO': 'FIRST_PAYMENT',
    'FALHA>PAGO': 'FIRST_PAYMENT',
    'PAGO>ESTORNADO': 'REFUND',
    'PAGO>MED': 'MED_OPENED',
    'MED>PAGO': 'MED_WON',
    'MED>ESTORNADO': 'MED_LOST',
    'PAGO>CHARGEBACK': 'CHARGEBACK_OPENED',
    'CHARGEBACK>PAGO': 'CHARGEBACK_REVERTED',
    'CHARGEBACK>ESTORNADO': 'CHARGEBACK_CONFIRMED',
  };

  it('names the §5 posting of every status pair, null for the rest', () => {
    for (const from of TRANSACTION_STATUSES) {
      for (const to of TRANSACTION_STATUSES) {
        assert.equal(postingKind(from, to), EXPECTED[`${from}>${to}`] ?? null, `${from} > ${to}`);
      }
    }
  });

  it('every posting kind is reachable by a legal move', () => {
    const reached = new Set(LEGAL.map(([from, , to]) => postingKind(from as TransactionStatus, to as TransactionStatus)));
    for (const kind of Object.values(EXPECTED)) assert.ok(reached.has(kind as never), kind);
  });
});
