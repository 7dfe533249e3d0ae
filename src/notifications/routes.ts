import type { AppContext } from '../context.ts';
import type { Router } from '../http/router.ts';
import { createWebhookRoute } from './routes/create-webhook.ts';
import { deleteWebhookRoute } from './routes/delete-webhook.ts';
import { listNotificationsRoute } from './routes/list-notifications.ts';
import { listWebhooksRoute } from './routes/list-webhooks.ts';
import { resendNotificationRoute } from './routes/resend-notification.ts';
import { testWebhookRoute } from './routes/test-webhook.ts';

/** Permanent webhooks and the delivery log (CONTRACT §3), one file per operation, registered in the order the OpenAPI document lists them. */
export async function notificationRoutes(app: Router, ctx: AppContext): Promise<void> {
  listWebhooksRoute(app, ctx);
  createWebhookRoute(app, ctx);
  deleteWebhookRoute(app, ctx);
  testWebhookRoute(app, ctx);
  listNotificationsRoute(app, ctx);
  resendNotificationRoute(app, ctx);
}
