import type { AppContext } from '../context.ts';
import type { Db } from '../db/db.ts';
import { maybeOne, one } from '../db/sql.ts';
import { ApiError, validationError } from '../domain/errors.ts';
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
  const r = await db.query<{ id: number; url: string; types: WebhookType[]; created_at: Date }>(
    'SELECT id, url, types, created_at FROM webhooks WHERE seller_id = $1 AND deleted_at IS NULL ORDER BY id',
    [sellerId],
  );
  return r.rows.map((w) => ({ id: w.id, url: w.url, types: w.types, createdAt: w.created_at }));
}

/** Adds one; the URL is checked first (scheme, credentials, private targets), the count under the seller's lock. */
export async function addWebhook(ctx: AppContext, sellerId: number, url: string, types: WebhookType[]): Promise<WebhookRecord> {
  const problem = await notificationUrlProblem(url, ctx.config.webhookAllowPrivate);
  if (problem) throw validationError([{ field: 'url', message: problem }]);
  const row = await ctx.db.tx(async (q) => {
    await q.query('SELECT 1 FROM sellers WHERE id = $1 FOR UPDATE', [sellerId]);
    const count = one(
      await q.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks WHERE seller_id = $1 AND deleted_at IS NULL', [sellerId]),
    ).n;
    if (count >= webhooks_per_seller_max)
      throw validationError([{ field: 'url', message: `at most ${webhooks_per_seller_max} webhooks per account` }]);
    return one(
      await q.query<{ id: number; created_at: Date }>('INSERT INTO webhooks (seller_id, url, types) VALUES ($1, $2, $3) RETURNING id, created_at', [
        sellerId,
        url,
        types,
      ]),
    );
  });
  return { id: row.id, url, types, createdAt: row.created_at };
}

/** 404 unknown, 403 another seller's; removed webhooks stay in the log's history. */
export async function removeWebhook(db: Db, sellerId: number, id: number): Promise<void> {
  const row = maybeOne(await db.query<{ seller_id: number }>('SELECT seller_id FROM webhooks WHERE id = $1 AND deleted_at IS NULL', [id]));
  if (!row) throw new ApiError('NOT_FOUND', 'Webhook not found');
  if (row.seller_id !== sellerId) throw new ApiError('FORBIDDEN', 'This webhook belongs to another account');
  await db.query('UPDATE webhooks SET deleted_at = now() WHERE id = $1', [id]);
}
