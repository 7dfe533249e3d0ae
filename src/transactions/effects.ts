import type { Queryable } from '../db/db.ts';
import type { TransactionRow } from './transactions-repo.ts';
import type { TransactionMove } from './transitions.ts';
import { ledgerEffect } from './ledger-effect.ts';
import { transactionNotificationEffect } from '../notifications/outbox.ts';

/**
 * Effects of a status change, run inside its database transaction in this order. An effect may
 * return the row it updated (e.g. the split written at the first payment).
 */
export type TransitionEffect = (q: Queryable, move: TransactionMove) => Promise<TransactionRow | void>;

export const transitionEffects: TransitionEffect[] = [ledgerEffect, transactionNotificationEffect];
