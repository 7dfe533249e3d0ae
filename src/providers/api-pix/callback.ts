/**
 * The PSP's callback (CONTRACT §11.1, §11.3): `POST {PIX_WEBHOOK_BASE_URL}/providers/pix/{secret}/pix`
 * with `{ pix: [ … ] }`, one URL for Pix received and, at Efí, Pix sent (items with
 * `gnExtras.idEnvio`, `tipo: "SOLICITACAO"`). Only the ids are read from it: a received Pix is
 * confirmed with GET /pix/{e2eid}, a sent one by reading it by idEnvio, and what the PSP's own API
 * says becomes the facts. A PSP that cannot be asked gets a 502 and calls again (reconciliation
 * covers a PSP that does not); the facts confirmed before are applied all the same. Up to 1,000
 * items are confirmed a few at a time and within a deadline, so a slow PSP holds no request for long.
 */
import { Type } from 'typebox';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ok, type Refused, refuse } from '../../domain/result.ts';
import { sameSecret } from '../../domain/secrets.ts';
import { cashoutOfIdEnvio, type EfiPayoutConnector } from '../efi/connector.ts';
import type { InboundEndpoint, InboundRequest } from '../ports.ts';
import { ApiPixError } from './client/api-pix-client.ts';
import type { ApiPixConnector } from './connector.ts';
import { receivedPixFacts } from './received-pix.ts';

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

type Confirmed = { ok: true; value: ProviderFact[] } | (Refused & { confirmed: ProviderFact[] });

/** How a callback's items are confirmed: this many at once, none started after `withinMs` (each call has its own timeout). */
export interface Confirming {
  parallel: number;
  withinMs: number;
}
const confirming_defaults: Confirming = { parallel: 8, withinMs: 20_000 };
/** One callback's budget: its parallel calls, the performance.now() after which none starts, where it says so. */
type Budget = { parallel: number; deadline: number; withinMs: number; log: InboundRequest['log'] };
type Phase = 'received' | 'sent';

/**
 * Each id's facts, asked of the provider by `confirm` (null: it failed, and said why in the log).
 * The facts keep the items' order. After a failure or past the deadline nothing more is asked: a
 * refusal, with the facts confirmed until then.
 */
async function confirmEach<T>(items: T[], phase: Phase, by: Budget, confirm: (item: T) => Promise<ProviderFact[] | null>): Promise<Confirmed> {
  const found: ProviderFact[][] = [];
  let next = 0;
  let stopped = false;
  let late = false;
  const worker = async () => {
    while (next < items.length && !stopped) {
      if (performance.now() > by.deadline) {
        stopped = late = true;
        break;
      }
      const n = next++;
      const facts = await confirm(items[n]!);
      if (facts === null) stopped = true;
      else found[n] = facts;
    }
  };
  await Promise.all(Array.from({ length: Math.min(by.parallel, items.length) }, worker));
  if (late)
    by.log.warn(
      { phase, asked: next, items: items.length, withinMs: by.withinMs },
      'PIX callback: out of time before every Pix was confirmed; the PSP is told to call again',
    );
  const confirmed = found.flatMap((facts) => facts ?? []);
  return stopped ? { ...refuse('PROVIDER_ERROR', 'The PSP could not confirm the Pix; call again'), confirmed } : ok(confirmed);
}

function receivedFacts(connector: ApiPixConnector, installationId: string, ids: string[], by: Budget) {
  return confirmEach(ids, 'received', by, async (id) => {
    try {
      const pix = await connector.client.getPix(id);
      // A Pix the PSP does not know is not a payment, whatever the body said.
      return pix.endToEndId === id ? await receivedPixFacts(connector.client, pix, installationId) : [];
    } catch (error) {
      if (error instanceof ApiPixError && error.status === 404) return [];
      by.log.warn({ err: error, endToEndId: id }, 'PIX callback: the PSP could not confirm this Pix');
      return null;
    }
  });
}

function sentFacts(payouts: EfiPayoutConnector | null, ids: string[], by: Budget) {
  // Another installation's payout, or one nobody here sent: nothing of ours to learn.
  const ours = payouts
    ? ids.flatMap((idEnvio) => {
        const cashoutId = cashoutOfIdEnvio(payouts, idEnvio);
        return cashoutId === null ? [] : [{ idEnvio, cashoutId }];
      })
    : [];
  return confirmEach(ours, 'sent', by, async ({ idEnvio, cashoutId }) => {
    try {
      // Null: Efí has no such sent Pix, whatever the body said.
      return (await payouts!.payoutFacts!(cashoutId)) ?? [];
    } catch (error) {
      by.log.warn({ err: error, idEnvio }, 'PIX callback: Efí could not confirm this sent Pix');
      return null;
    }
  });
}

export function pixCallback(
  connector: ApiPixConnector,
  webhookSecret: string,
  installationId: string,
  payouts: EfiPayoutConnector | null,
  how: Confirming = confirming_defaults,
): InboundEndpoint {
  return {
    provider: 'api-pix',
    url: '/providers/pix/:secret/pix',
    body: Callback,
    // Without the secret the endpoint does not exist, whatever the body.
    authenticate: ({ params }) => (sameSecret(params.secret ?? '', webhookSecret) ? null : { refusal: { code: 'NOT_FOUND', message: 'Not found' } }),
    async read({ body, log }) {
      // One deadline for the whole callback, received and sent Pix alike.
      const by = { parallel: how.parallel, deadline: performance.now() + how.withinMs, withinMs: how.withinMs, log };
      const received = await receivedFacts(connector, installationId, receivedIds(body), by);
      if (!received.ok) return received;
      const sent = await sentFacts(payouts, sentIds(body), by);
      if (!sent.ok) return { ...sent, confirmed: [...received.value, ...sent.confirmed] };
      return ok([...received.value, ...sent.value]);
    },
    answer: (body) => ({ contentType: 'application/json; charset=utf-8', body: { received: receivedIds(body).length + sentIds(body).length } }),
  };
}
