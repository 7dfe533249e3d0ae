/** What the webhook and delivery-log operations share: their tag and security, the Webhook schema and view. */
import { Type } from 'typebox';
import { url_max_length } from '../../domain/limits.ts';
import type { BodyExample } from '../../http/openapi.ts';
import { Fields, StringEnum, sellerSecurity } from '../../http/router.ts';
import { WEBHOOK_TYPES, type WebhookRecord } from '../webhooks.ts';

export const Webhook = Type.Object(
  {
    id: Type.Integer(),
    url: Type.String(),
    types: Type.Array(StringEnum(WEBHOOK_TYPES), { description: 'TRANSACTION: status changes of sales; WITHDRAWAL: of cashouts' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Webhook' },
);
export const WebhookRequest = Fields(
  {
    url: Type.String({ minLength: 1, maxLength: url_max_length }),
    types: Type.Array(StringEnum(WEBHOOK_TYPES), { minItems: 1, maxItems: 2, uniqueItems: true }),
  },
  { title: 'WebhookRequest' },
);
export const webhookExamples: Record<string, BodyExample> = {
  transactions: { summary: 'Status changes of sales', value: { url: 'https://loja.example.com/webhooks/vendas', types: ['TRANSACTION'] } },
  withdrawals: {
    summary: 'Status changes of cashouts ("notify withdrawals")',
    value: { url: 'https://loja.example.com/webhooks/saques', types: ['WITHDRAWAL'] },
  },
  both: { summary: 'Both, to one URL', value: { url: 'https://loja.example.com/webhooks', types: ['TRANSACTION', 'WITHDRAWAL'] } },
};
export const common = { tags: ['notifications'], security: sellerSecurity };

export const webhookView = (w: WebhookRecord) => ({ id: w.id, url: w.url, types: w.types, createdAt: w.createdAt.toISOString() });
