/**
 * `POST /providers/adyen/notifications` (CONTRACT §11.2): HTTP Basic checked before the body is
 * read, then every item's HMAC; one bad item refuses the whole batch, before anything is stored.
 * Items of another merchant account are not ours and are left out. Answered `[accepted]` once every
 * item is stored and applied (held or left for the operator included).
 */
import { Type } from 'typebox';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ok, refuse } from '../../domain/result.ts';
import { sameSecret } from '../../domain/secrets.ts';
import type { InboundEndpoint, InboundRequest } from '../ports.ts';
import type { AdyenConnection } from './config.ts';
import { validNotificationHmac } from './hmac.ts';
import { factOfItem, type NotificationItem } from './notification-facts.ts';
import { type ReportInbox, reportVerdict } from './report-queue.ts';

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
function basicMatches(header: unknown, username: string, password: string): boolean {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(typeof header === 'string' ? header : '');
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
 * A REPORT_AVAILABLE item (CONTRACT §15): a Settlement details report on an Adyen host is queued for
 * the report job; the notice stored says what became of it.
 */
async function reportNotice(pf: ProviderFact, item: NotificationItem, connection: AdyenConnection, reports: ReportInbox, log: InboundRequest['log']) {
  const verdict =
    item.success === 'true'
      ? reportVerdict(item.pspReference, item.reason, connection.checkoutUrl)
      : { fetch: false as const, why: 'success is false' };
  if (verdict.fetch) await reports.queue(verdict.file, verdict.url);
  else if (verdict.why !== 'not a Settlement details report')
    log.warn({ file: item.pspReference, url: item.reason, why: verdict.why }, 'Adyen report not downloaded');
  const what = verdict.fetch ? `report ${verdict.file} queued for download` : `report ${item.pspReference} not downloaded: ${verdict.why}`;
  return { ...pf, fact: { kind: 'NOTICE' as const, what } };
}

/** `reports`: where REPORT_AVAILABLE's settlement reports are queued; without it they are stored as notices only. */
export function adyenNotifications(connection: AdyenConnection, reports?: ReportInbox): InboundEndpoint {
  return {
    provider: 'adyen',
    url: '/providers/adyen/notifications',
    body: Body,
    authenticate: ({ headers }) =>
      basicMatches(headers.authorization, connection.notificationUsername, connection.notificationPassword)
        ? null
        : {
            refusal: { code: 'UNAUTHORIZED', message: 'Notification credentials are not valid' },
            headers: { 'www-authenticate': 'Basic realm="adyen-notifications"' },
          },
    async read({ body, log }) {
      const items = (body as { notificationItems: { NotificationRequestItem: NotificationItem }[] }).notificationItems.map(
        (i) => i.NotificationRequestItem,
      );
      const unsigned = items.findIndex((item) => !validNotificationHmac(item, item.additionalData?.hmacSignature, connection.hmacKey));
      if (unsigned >= 0) {
        const { pspReference, eventCode } = items[unsigned]!;
        log.warn({ pspReference, eventCode }, 'Adyen notification with a bad HMAC refused');
        return refuse('UNAUTHORIZED', `notificationItems[${unsigned}]: the HMAC signature is not valid`);
      }
      const facts: ProviderFact[] = [];
      for (const item of items) {
        if (item.merchantAccountCode !== connection.merchantAccount) {
          log.warn(
            { pspReference: item.pspReference, merchantAccountCode: item.merchantAccountCode },
            'Adyen notification for another merchant account ignored',
          );
          continue;
        }
        const fact = factOfItem(item, connection.capture === 'manual');
        facts.push(item.eventCode === 'REPORT_AVAILABLE' && reports ? await reportNotice(fact, item, connection, reports, log) : fact);
      }
      return ok(facts);
    },
    answer: () => ({ contentType: 'text/plain; charset=utf-8', body: '[accepted]' }),
  };
}
