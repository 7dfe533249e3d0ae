/**
 * Efí's charge notifications (CONTRACT §11.4): `POST {BOLETO_WEBHOOK_BASE_URL}/providers/efi/charges/{secret}`
 * with the form `notification=<token>`, unsigned. Never trusted: the token's history is read from
 * Efí (GET /v1/notification/{token}), and each status change in it becomes one fact, applied in
 * order. Efí sends the token again until it is answered 200, which happens only after every fact
 * is stored; an Efí that cannot be asked gets a 502.
 */
import { Type } from 'typebox';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ok, refuse } from '../../domain/result.ts';
import { sameSecret } from '../../domain/secrets.ts';
import type { InboundEndpoint } from '../ports.ts';
import { factOfChange } from './boleto-facts.ts';
import type { EfiChargesClient } from './charges-client.ts';

const Notification = Type.Object({ notification: Type.String({ pattern: '^[A-Za-z0-9-]{1,100}$' }) });

export function chargeNotifications(connector: { charges: EfiChargesClient }, webhookSecret: string, installationId: string): InboundEndpoint {
  return {
    provider: 'efi',
    url: '/providers/efi/charges/:secret',
    body: Notification,
    form: true,
    // Without the secret the endpoint does not exist, whatever the body.
    authenticate: ({ params }) => (sameSecret(params.secret ?? '', webhookSecret) ? null : { refusal: { code: 'NOT_FOUND', message: 'Not found' } }),
    async read({ body, log }) {
      const token = (body as { notification: string }).notification;
      let history: Awaited<ReturnType<EfiChargesClient['notification']>>;
      try {
        history = await connector.charges.notification(token);
      } catch (error) {
        // A token Efí does not know tells nothing (a forged one): answered, nothing moves.
        if ((error as { status?: number }).status === 404) {
          log.warn({ token }, 'Efí charge notification: Efí does not know this token');
          return ok([]);
        }
        log.warn({ err: error }, 'Efí charge notification: Efí could not be asked for its history');
        return refuse('PROVIDER_ERROR', 'Efí could not confirm the notification; send it again');
      }
      const ordered = [...history].sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
      return ok(ordered.map((change): ProviderFact => factOfChange(change, installationId)));
    },
    answer: () => ({ contentType: 'application/json; charset=utf-8', body: { received: true } }),
  };
}
