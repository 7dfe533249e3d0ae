/**
 * The PSP's callback (CONTRACT §11.1, §11.3): `POST {PIX_WEBHOOK_BASE_URL}/providers/pix/{secret}/pix`
 * with `{ pix: [ … ] }`, one URL for Pix received and, at Efí, Pix sent (items with
 * `gnExtras.idEnvio`, `tipo: "SOLICITACAO"`). Only the ids are read from it: a received Pix is
 * confirmed with GET /pix/{e2eid}, a sent one by reading it by idEnvio, and what the PSP's own API
 * says becomes the facts. A PSP that cannot be asked gets a 502 and calls again (reconciliation
 * covers a PSP that does not).
 */
import { Type } from 'typebox';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ok, type Result, refuse } from '../../domain/result.ts';
import { sameSecret } from '../../domain/secrets.ts';
import { cashoutOfIdEnvio, type EfiPayoutConnector } from '../efi/connector.ts';
import type { InboundEndpoint, InboundRequest } from '../ports.ts';
import { ApiPixError } from './client/api-pix-client.ts';
import type { ApiPixConnector } from './connector.ts';
import { factsOfPix } from './facts.ts';

const Item = Type.Object({
  endToEndId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9]{32}$' })),
  tipo: Type.Optional(Type.String({ maxLength: 64 })),
  gnExtras: Type.Optional(Type.Object({ idEnvio: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$' })) })),
});
const Callback = Type.Object({ pix: Type.Array(Item, { minItems: 1, maxItems: 1000 }) });
type CallbackItem = { endToEndId?: string; tipo?: string; gnExtras?: { idEnvio?: string } };

const itemsOf = (body: unknown) => (body as { pix: CallbackItem[] }).pix;
const isSent = (item: CallbackItem) => item.gnExtras?.idEnvio !== undefined || item.tipo === 'SOLICITACAO';
const receivedIds = (body: unknown) => [
  ...new Set(
    itemsOf(body)
      .filter((i) => !isSent(i) && i.endToEndId !== undefined)
      .map((i) => i.endToEndId!),
  ),
];
const sentIds = (body: unknown) => [...new Set(itemsOf(body).flatMap((i) => (i.gnExtras?.idEnvio ? [i.gnExtras.idEnvio] : [])))];

const unconfirmed = () => refuse('PROVIDER_ERROR', 'The PSP could not confirm the Pix; call again');

async function receivedFacts(
  connector: ApiPixConnector,
  installationId: string,
  ids: string[],
  log: InboundRequest['log'],
): Promise<Result<ProviderFact[]>> {
  const facts: ProviderFact[] = [];
  for (const id of ids) {
    let pix: Awaited<ReturnType<ApiPixConnector['client']['getPix']>> | null;
    try {
      pix = await connector.client.getPix(id);
    } catch (error) {
      if (!(error instanceof ApiPixError && error.status === 404)) {
        log.warn({ err: error, endToEndId: id }, 'PIX callback: the PSP could not confirm this Pix');
        return unconfirmed();
      }
      pix = null;
    }
    // A Pix the PSP does not know is not a payment, whatever the body said.
    if (pix !== null && pix.endToEndId === id) facts.push(...factsOfPix(pix, installationId));
  }
  return ok(facts);
}

async function sentFacts(payouts: EfiPayoutConnector | null, ids: string[], log: InboundRequest['log']): Promise<Result<ProviderFact[]>> {
  const facts: ProviderFact[] = [];
  for (const idEnvio of ids) {
    // Another installation's payout, or one nobody here sent: nothing of ours to learn.
    const cashoutId = payouts && cashoutOfIdEnvio(payouts, idEnvio);
    if (!payouts || cashoutId === null) continue;
    try {
      // Null: Efí has no such sent Pix, whatever the body said.
      facts.push(...((await payouts.payoutFacts!(cashoutId)) ?? []));
    } catch (error) {
      log.warn({ err: error, idEnvio }, 'PIX callback: Efí could not confirm this sent Pix');
      return unconfirmed();
    }
  }
  return ok(facts);
}

export function pixCallback(
  connector: ApiPixConnector,
  webhookSecret: string,
  installationId: string,
  payouts: EfiPayoutConnector | null,
): InboundEndpoint {
  return {
    provider: 'api-pix',
    url: '/providers/pix/:secret/pix',
    body: Callback,
    // Without the secret the endpoint does not exist, whatever the body.
    authenticate: ({ params }) => (sameSecret(params.secret ?? '', webhookSecret) ? null : { refusal: { code: 'NOT_FOUND', message: 'Not found' } }),
    async read({ body, log }) {
      const received = await receivedFacts(connector, installationId, receivedIds(body), log);
      if (!received.ok) return received;
      const sent = await sentFacts(payouts, sentIds(body), log);
      if (!sent.ok) return sent;
      return ok([...received.value, ...sent.value]);
    },
    answer: (body) => ({ contentType: 'application/json; charset=utf-8', body: { received: receivedIds(body).length + sentIds(body).length } }),
  };
}
