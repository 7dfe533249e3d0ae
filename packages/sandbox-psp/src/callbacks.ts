/**
 * The API Pix callback: POST {webhookUrl}/pix with `{ "pix": [ … ] }`, the Pix as it stands when
 * sent (so a devolução's callback carries its `devolucoes`). Each attempt has a time limit and the
 * attempts are few; a receiver that never answers loses the callback, as with a real PSP, and finds
 * the Pix through GET /pix.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { pixById } from './pix-store.ts';
import type { Queryable } from './sql.ts';
import type { PspLogger } from './types.ts';
import { callbackUrl, findWebhook } from './webhooks.ts';

export interface CallbackSender {
  mode: 'deliver' | 'drop';
  /** Resolves once the callback was answered 2xx, given up, dropped or not due (no webhook); never rejects. */
  notify(e2eid: string): Promise<void>;
  /** The same for a callback item made by the caller (a sent Pix's), to the webhook of `chave`. */
  notifyItem(chave: string, item: object, ref: string): Promise<void>;
  /** Efí's charge notification: `notification=<token>`, form-encoded, to the charge's own URL. */
  notifyCharge(url: string, token: string, ref: string): Promise<void>;
  close(): Promise<void>;
}

export interface CallbackOptions {
  db: Queryable;
  logger: PspLogger;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
}

export function callbackSender(o: CallbackOptions): CallbackSender {
  const closing = new AbortController();
  const agent = new Agent({ connections: 16 });
  const inFlight = new Set<Promise<void>>();
  const track = (work: Promise<void>, ref: string) => {
    const p = work.catch((err) => o.logger.error({ err, ref }, 'sandbox PSP: callback failed'));
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  };
  const sender: CallbackSender = {
    mode: 'deliver',
    notify(e2eid) {
      return track(
        (async () => {
          const pix = await pixById(o.db, e2eid);
          // The file: only Pix associated with a txid are notified.
          if (pix?.txid) await send(o, agent, closing.signal, sender.mode, pix.chave, pix, e2eid);
        })(),
        e2eid,
      );
    },
    notifyItem(chave, item, ref) {
      return track(send(o, agent, closing.signal, sender.mode, chave, item, ref), ref);
    },
    notifyCharge(url, token, ref) {
      if (sender.mode === 'drop') {
        o.logger.info({ ref }, 'sandbox PSP: charge notification dropped on purpose');
        return Promise.resolve();
      }
      const body = new URLSearchParams({ notification: token }).toString();
      return track(deliver(o, agent, closing.signal, new URL(url), body, 'application/x-www-form-urlencoded', ref), ref);
    },
    async close() {
      closing.abort();
      await Promise.allSettled([...inFlight]);
      await agent.close();
    },
  };
  return sender;
}

async function send(o: CallbackOptions, agent: Agent, closing: AbortSignal, mode: string, chave: string, item: object, e2eid: string): Promise<void> {
  const webhook = await findWebhook(o.db, chave);
  if (!webhook) return;
  if (mode === 'drop') {
    o.logger.info({ e2eid }, 'sandbox PSP: callback dropped on purpose');
    return;
  }
  await deliver(o, agent, closing, callbackUrl(webhook.webhook_url), JSON.stringify({ pix: [item] }), 'application/json', e2eid);
}

async function deliver(
  o: CallbackOptions,
  agent: Agent,
  closing: AbortSignal,
  url: URL,
  body: string,
  contentType: string,
  ref: string,
): Promise<void> {
  for (let attempt = 0; attempt <= o.retryDelaysMs.length; attempt++) {
    if (attempt > 0 && !(await pause(o.retryDelaysMs[attempt - 1]!, closing))) return;
    const outcome = await post(agent, url, body, contentType, AbortSignal.any([closing, AbortSignal.timeout(o.timeoutMs)]));
    if (outcome === 'ok') return;
    if (closing.aborted) return;
    o.logger.warn({ ref, url: url.href, attempt: attempt + 1, outcome }, 'sandbox PSP: callback attempt failed');
  }
  o.logger.error({ ref, url: url.href }, 'sandbox PSP: callback given up; the receiver can still ask for it');
}

/** False when the PSP is closing. */
async function pause(ms: number, closing: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal: closing });
    return true;
  } catch {
    return false;
  }
}

/** 'ok' for a 2xx; otherwise what went wrong, for the log. */
async function post(agent: Agent, url: URL, body: string, contentType: string, signal: AbortSignal): Promise<string> {
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': contentType, 'user-agent': 'sandbox-psp-callback/1' },
      body,
      signal,
    });
    await res.body.dump();
    return res.statusCode >= 200 && res.statusCode < 300 ? 'ok' : `HTTP ${res.statusCode}`;
  } catch (err) {
    return signal.aborted ? 'timed out' : (err as Error).message;
  }
}
