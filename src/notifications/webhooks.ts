import type { AppContext } from '../context.ts';
import type { Db } from '../db/db.ts';
import { maybeOne, one, run, sql } from '../db/sql.ts';
import { invalid, ok, type Result, refuse } from '../domain/result.ts';
import { notificationUrlProblem } from './target-url.ts';

const webhooks_per_seller_max = 20;

export const WEBHOOK_TYPES = ['TRANSACTION', 'WITHDRAWAL'] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

export interface WebhookRecord {
  id: number;
  url: string;
  types: WebhookType[];
  createdAt: Date;
}

/** The seller's permanent webhooks (the spec's panel "integrations"), oldest first. */
export async function listWebhooks(db: Db, sellerId: number): Promise<WebhookRecord[]> {
  const r = await run<{ id: number; url: string; types: WebhookType[]; created_at: Date }>(
    db,
    sql`SELECT id, url, types, created_at FROM webhooks WHERE seller_id = ${sellerId} AND deleted_at IS NULL ORDER BY id`,
  );
  return r.rows.map((w) => ({ id: w.id, url: w.url, types: w.types, createdAt: w.created_at }));
}

/** Adds one; the URL is checked first (scheme, credentials, private targets), the count under the seller's lock. */
export async function addWebhook(ctx: AppContext, sellerId: number, url: string, types: WebhookType[]): Promise<Result<WebhookRecord>> {
  const problem = await notificationUrlProblem(url, ctx.config.webhookAllowPrivate);
  if (problem) return invalid([{ field: 'url', message: problem }]);
  return ctx.db.tx(async (q): Promise<Result<WebhookRecord>> => {
    await run(q, sql`SELECT 1 FROM sellers WHERE id = ${sellerId} FOR UPDATE`);
    const count = one(
      await run<{ n: number }>(q, sql`SELECT count(*)::int AS n FROM webhooks WHERE seller_id = ${sellerId} AND deleted_at IS NULL`),
    ).n;
    // Refused before anything is written: the transaction only held the seller's lock.
    if (count >= webhooks_per_seller_max) return invalid([{ field: 'url', message: `at most ${webhooks_per_seller_max} webhooks per account` }]);
    const row = one(
      await run<{ id: number; created_at: Date }>(
        q,
        sql`INSERT INTO webhooks (seller_id, url, types) VALUES (${sellerId}, ${url}, ${types}) RETURNING id, created_at`,
      ),
    );
    return ok({ id: row.id, url, types, createdAt: row.created_at });
  });
}

/** 404 unknown, 403 another seller's; removed webhooks stay in the log's history. */
export async function removeWebhook(db: Db, sellerId: number, id: number): Promise<Result<void>> {
  const row = maybeOne(await run<{ seller_id: number }>(db, sql`SELECT seller_id FROM webhooks WHERE id = ${id} AND deleted_at IS NULL`));
  if (!row) return refuse('NOT_FOUND', 'Webhook not found');
  if (row.seller_id !== sellerId) return refuse('FORBIDDEN', 'This webhook belongs to another account');
  await run(db, sql`UPDATE webhooks SET deleted_at = now() WHERE id = ${id}`);
  return ok(undefined);
}
