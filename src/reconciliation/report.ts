/** A day's reconciliation as the operator reads it (CONTRACT §15): one entry per account, amounts in cents. */
import { type Static, Type } from 'typebox';
import type { Queryable } from '../db/db.ts';
import { run, sql } from '../db/sql.ts';
import { StringEnum } from '../http/router.ts';
import type { Account } from '../providers/ports.ts';
import type { Finding } from './matcher.ts';

const Cents = (description: string) => Type.Integer({ description: `${description}, in cents` });

export const ReconciliationAccount = Type.Object(
  {
    account: Type.String({ description: 'the provider account (CONTRACT §11)' }),
    connector: Type.String(),
    state: StringEnum(['matched', 'mismatched', 'pending', 'unreadable'] as const, {
      description:
        'pending: not reconciled yet, or the provider has not published its record of the day; unreadable: its record could not be read (tried again)',
    }),
    providerMovements: Type.Integer({ description: "movements of the provider's record booked that day (fees aside)" }),
    ledgerMovements: Type.Integer({ description: "the journal's movements of the account's funds that day with a provider reference" }),
    matched: Type.Integer(),
    providerTotal: Cents('their sum, + into the account'),
    ledgerTotal: Cents('their sum, + into the account'),
    findings: Type.Array(
      Type.Object({
        side: StringEnum(['provider', 'ledger'] as const),
        reference: Type.String(),
        amount: Cents('as this side has it'),
        otherAmount: Type.Union([Type.Integer(), Type.Null()], { description: 'as the other side has it, null when it has none' }),
        eventId: Type.Union([Type.Integer(), Type.Null()], { description: 'the provider event RECONCILIATION that shows it' }),
      }),
      { description: 'the first 100 findings; every one is a provider event' },
    ),
    findingCount: Type.Integer({ description: 'addition: every finding of the day' }),
    providerBalance: Type.Union([Type.Integer(), Type.Null()], { description: 'addition: the balance the provider reports (Efí), when last read' }),
    ledgerBalance: Type.Union([Type.Integer(), Type.Null()], { description: "addition: customer_funds:<account> then, the platform's money there" }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'addition: why the record could not be read' }),
    reconciledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'ReconciliationAccount' },
);

/** An account's day as the report shows it. */
export type ReconciliationAccountView = Static<typeof ReconciliationAccount>;

export const ReconciliationDay = Type.Object(
  { date: Type.String({ format: 'date' }), accounts: Type.Array(ReconciliationAccount) },
  { title: 'ReconciliationDay' },
);

interface DayRow {
  account: string;
  connector: string;
  state: 'matched' | 'mismatched' | 'pending' | 'unreadable';
  provider_movements: number;
  ledger_movements: number;
  matched: number;
  provider_total: string;
  ledger_total: string;
  findings: Finding[];
  finding_count: number;
  provider_balance: string | null;
  ledger_balance: string | null;
  error: string | null;
  reconciled_at: Date;
}

const cents = (v: string | null) => (v === null ? null : Number(v));

/** The day of every configured account (pending when not reconciled yet) and of any other that was. */
export async function dayReport(q: Queryable, day: string, configured: Account[]) {
  const r = await run<DayRow>(q, sql`SELECT * FROM reconciliation_days WHERE day = ${day}::date ORDER BY account`);
  const rows = new Map(r.rows.map((row) => [row.account, row]));
  const accounts = configured.filter((a) => !rows.has(a.id)).map((a) => pendingOf(a));
  return {
    date: day,
    accounts: [...r.rows.map(viewOf), ...accounts].sort((a, b) => a.account.localeCompare(b.account)),
  };
}

const pendingOf = (a: Account) => ({
  account: a.id,
  connector: a.connector,
  state: 'pending' as const,
  providerMovements: 0,
  ledgerMovements: 0,
  matched: 0,
  providerTotal: 0,
  ledgerTotal: 0,
  findings: [],
  findingCount: 0,
  providerBalance: null,
  ledgerBalance: null,
  error: null,
  reconciledAt: null,
});

function viewOf(row: DayRow) {
  return {
    account: row.account,
    connector: row.connector,
    state: row.state,
    providerMovements: row.provider_movements,
    ledgerMovements: row.ledger_movements,
    matched: row.matched,
    providerTotal: Number(row.provider_total),
    ledgerTotal: Number(row.ledger_total),
    findings: row.findings,
    findingCount: row.finding_count,
    providerBalance: cents(row.provider_balance),
    ledgerBalance: cents(row.ledger_balance),
    error: row.error,
    reconciledAt: row.reconciled_at.toISOString(),
  };
}
