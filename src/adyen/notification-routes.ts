import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import { sameSecret } from '../domain/secrets.ts';
import type { Router } from '../http/router.ts';
import type { AdyenRail } from './adyen-rail.ts';
import type { NotificationItem } from './event-mapping.ts';
import { validNotificationHmac } from './hmac.ts';
import { applyAdyenItem, for_operator } from './notifications.ts';

// The fields the gateway reads; Adyen's items carry more (the official file describes them all).
const Item = Type.Object({
  eventCode: Type.String({ minLength: 1, maxLength: 100 }),
  success: Type.Union([Type.Literal('true'), Type.Literal('false')]),
  pspReference: Type.String({ minLength: 1, maxLength: 100 }),
  originalReference: Type.Optional(Type.String({ maxLength: 100 })),
  merchantReference: Type.String({ maxLength: 200 }),
  merchantAccountCode: Type.String({ maxLength: 200 }),
  amount: Type.Object({ value: Type.Integer({ minimum: 0 }), currency: Type.String({ maxLength: 3 }) }),
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
  additionalData: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
const Body = Type.Object({
  live: Type.String(),
  notificationItems: Type.Array(Type.Object({ NotificationRequestItem: Item }), { minItems: 1, maxItems: 100 }),
});

/** HTTP Basic, as configured in Adyen's Customer Area; both parts compared in constant time. */
function basicMatches(header: string | undefined, username: string, password: string): boolean {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (!match) return false;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // Both compared, whatever the first gives: the time taken says nothing about which was wrong.
  const user = sameSecret(decoded.slice(0, colon), username);
  const pass = sameSecret(decoded.slice(colon + 1), password);
  return user && pass;
}

/**
 * `POST /providers/adyen/notifications` (CONTRACT §11.2): Basic checked, then every item's HMAC;
 * one bad item refuses the whole batch, before anything is applied. Items of another merchant
 * account are acknowledged and ignored. Answered `[accepted]` only once every item is committed.
 */
export async function adyenNotificationRoutes(app: Router, ctx: AppContext, rail: AdyenRail): Promise<void> {
  const { connection } = rail;
  app.post(
    '/providers/adyen/notifications',
    {
      schema: { hide: true, body: Body },
      onRequest: async (request, reply) => {
        if (!basicMatches(request.headers.authorization, connection.notificationUsername, connection.notificationPassword)) {
          reply.header('www-authenticate', 'Basic realm="adyen-notifications"');
          throw new ApiError('UNAUTHORIZED', 'Notification credentials are not valid');
        }
      },
    },
    async (request, reply) => {
      const items = request.body.notificationItems.map((i) => i.NotificationRequestItem as NotificationItem);
      const unsigned = items.findIndex((item) => !validNotificationHmac(item, item.additionalData?.hmacSignature, connection.hmacKey));
      if (unsigned >= 0) {
        request.log.warn(
          { pspReference: items[unsigned]!.pspReference, eventCode: items[unsigned]!.eventCode },
          'Adyen notification with a bad HMAC refused',
        );
        throw new ApiError('UNAUTHORIZED', `notificationItems[${unsigned}]: the HMAC signature is not valid`);
      }
      for (const item of items) {
        if (item.merchantAccountCode !== connection.merchantAccount) {
          request.log.warn(
            { pspReference: item.pspReference, merchantAccountCode: item.merchantAccountCode },
            'Adyen notification for another merchant account ignored',
          );
          continue;
        }
        const outcome = await applyAdyenItem(ctx, rail, item);
        const said = { pspReference: item.pspReference, eventCode: item.eventCode, success: item.success, outcome };
        if (outcome.startsWith(for_operator)) request.log.error(said, 'Adyen notification needs the operator');
        else request.log.info(said, 'Adyen notification');
      }
      return reply.type('text/plain; charset=utf-8').send('[accepted]');
    },
  );
}
