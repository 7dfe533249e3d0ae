/**
 * The PSP's callback (CONTRACT §11.1): `POST {PIX_WEBHOOK_BASE_URL}/providers/pix/{secret}/pix` with
 * `{ pix: [ … ] }`. Only the ids are read from it: each received Pix is read back from the PSP
 * (the PIX port's sync), and what the PSP's own API says becomes the facts. One URL may also carry
 * items of another port at the same PSP (Efí's sent Pix): an extension claims those and confirms
 * them its own way. A PSP that cannot be asked gets a 502 and calls again (reconciliation covers a
 * PSP that does not); the facts confirmed before are applied all the same. Up to 1,000 items are
 * confirmed a few at a time and within a deadline, so a slow PSP holds no request for long.
 */
import { Type } from 'typebox';
import type { ProviderFact } from '../../domain/provider-facts.ts';
import { ok, type Refused, refuse } from '../../domain/result.ts';
import { sameSecret } from '../../domain/secrets.ts';
import type { InboundEndpoint, InboundRequest, PixPsp } from '../ports.ts';

const Item = Type.Object({
  endToEndId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9]{32}$' })),
  tipo: Type.Optional(Type.String({ maxLength: 64 })),
  gnExtras: Type.Optional(Type.Object({ idEnvio: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9]{1,35}$' })) })),
});
const Callback = Type.Object({ pix: Type.Array(Item, { minItems: 1, maxItems: 1000 }) });
export type CallbackItem = { endToEndId?: string; tipo?: string; gnExtras?: { idEnvio?: string } };

/** Items of the callback that are another port's (Efí's sent Pix): claimed by it, and confirmed its own way. */
export interface CallbackExtension {
  claims(item: CallbackItem): boolean;
  /** The ids of the claimed items to confirm, deduplicated. */
  ids(items: CallbackItem[]): string[];
  phase: Phase;
  /** The facts of one id; null: it could not be confirmed (said in the log). */
  confirm(id: string, log: InboundRequest['log']): Promise<ProviderFact[] | null>;
}

const itemsOf = (body: unknown) => (body as { pix: CallbackItem[] }).pix;

type Confirmed = { ok: true; value: ProviderFact[] } | (Refused & { confirmed: ProviderFact[] });

/** How a callback's items are confirmed: this many at once, none started after `withinMs` (each call has its own timeout). */
export interface Confirming {
  parallel: number;
  withinMs: number;
}
const confirming_defaults: Confirming = { parallel: 8, withinMs: 20_000 };
/** One callback's budget: its parallel calls, the performance.now() after which none starts, where it says so. */
type Budget = { parallel: number; deadline: number; withinMs: number; log: InboundRequest['log'] };
export type Phase = 'received' | 'sent';

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

function receivedFacts(psp: PixPsp, ids: string[], by: Budget) {
  return confirmEach(ids, 'received', by, async (id) => {
    try {
      return await psp.sync(id);
    } catch (error) {
      by.log.warn({ err: error, endToEndId: id }, 'PIX callback: the PSP could not confirm this Pix');
      return null;
    }
  });
}

export function pixCallback(
  psp: PixPsp,
  webhookSecret: string,
  extension: CallbackExtension | null,
  how: Confirming = confirming_defaults,
): InboundEndpoint {
  const received = (body: unknown) => [
    ...new Set(
      itemsOf(body)
        .filter((i) => !extension?.claims(i) && i.endToEndId !== undefined)
        .map((i) => i.endToEndId!),
    ),
  ];
  const claimed = (body: unknown) => (extension ? extension.ids(itemsOf(body).filter((i) => extension.claims(i))) : []);
  return {
    provider: psp.account.connector,
    url: '/providers/pix/:secret/pix',
    body: Callback,
    // Without the secret the endpoint does not exist, whatever the body.
    authenticate: ({ params }) => (sameSecret(params.secret ?? '', webhookSecret) ? null : { refusal: { code: 'NOT_FOUND', message: 'Not found' } }),
    async read({ body, log }) {
      // One deadline for the whole callback, every item alike.
      const by = { parallel: how.parallel, deadline: performance.now() + how.withinMs, withinMs: how.withinMs, log };
      const first = await receivedFacts(psp, received(body), by);
      if (!first.ok || !extension) return first;
      const second = await confirmEach(claimed(body), extension.phase, by, (id) => extension.confirm(id, log));
      if (!second.ok) return { ...second, confirmed: [...first.value, ...second.confirmed] };
      return ok([...first.value, ...second.value]);
    },
    answer: (body) => ({ contentType: 'application/json; charset=utf-8', body: { received: received(body).length + claimed(body).length } }),
  };
}
