/**
 * Adyen's Checkout API v71 as the gateway uses it: payments, captures, refunds, cancels and
 * reversals, each with an Idempotency-Key (Adyen keeps them for weeks), so that a call whose
 * answer was lost is simply sent again. Bounded in time; never logs a request body (card data).
 */
import { Agent, request } from 'undici';
import { timeoutSignal } from '../../http/timeout-signal.ts';
import type { AdyenConnection } from './config.ts';

export type AdyenFailure = 'timeout' | 'network' | 'refused' | 'server' | 'invalid-answer';

/** A call Adyen did not answer with success. `refused` (4xx) is final; the others may be sent again. */
export class AdyenError extends Error {
  readonly kind: AdyenFailure;
  readonly status: number | null;
  readonly errorCode: string | null;
  constructor(kind: AdyenFailure, operation: string, reason: string, status: number | null = null, errorCode: string | null = null) {
    super(`Adyen ${operation}: ${reason}`);
    this.name = 'AdyenError';
    this.kind = kind;
    this.status = status;
    this.errorCode = errorCode;
  }
  get retryable(): boolean {
    return this.kind !== 'refused';
  }
}

export interface Amount {
  currency: 'BRL';
  value: number;
}
export interface PaymentAnswer {
  pspReference?: string;
  resultCode?: string;
  refusalReason?: string;
  merchantReference?: string;
  /** RedirectShopper and the like: where the shopper's browser goes. */
  action?: { type?: string; method?: string; url?: string; data?: Record<string, unknown> };
}
/** The 201 of captures, refunds, cancels and reversals: Adyen took the request; the outcome comes by notification. */
export interface ModificationAnswer {
  pspReference: string;
  status: string;
}

export type Modification = 'captures' | 'refunds' | 'cancels' | 'reversals';

export interface AdyenClient {
  payment(body: Record<string, unknown>, idempotencyKey: string): Promise<PaymentAnswer>;
  /** POST /payments/details: the shopper's return from its issuer (3-D Secure). */
  details(body: Record<string, unknown>, idempotencyKey: string): Promise<PaymentAnswer>;
  modify(kind: Modification, paymentPsp: string, body: Record<string, unknown>, idempotencyKey: string): Promise<ModificationAnswer>;
  close(): Promise<void>;
}

// A payment whose answer was lost is asked again with its key; one more try fits in the deadline.
const attempts = 2;

export function createAdyenClient(connection: AdyenConnection): AdyenClient {
  const agent = new Agent({ connections: 16, keepAliveTimeout: 10_000, connect: { timeout: connection.timeoutMs, rejectUnauthorized: true } });
  const call = async (operation: string, path: string, body: Record<string, unknown>, key: string): Promise<unknown> => {
    let last: AdyenError | null = null;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        return await exchange(agent, connection, operation, path, body, key);
      } catch (error) {
        last = error instanceof AdyenError ? error : new AdyenError('network', operation, String(error));
        if (!last.retryable || last.kind === 'timeout') break;
      }
    }
    throw last;
  };
  return {
    async payment(body, key) {
      const answer = (await call('POST /payments', '/payments', body, key)) as PaymentAnswer | undefined;
      if (typeof answer !== 'object' || answer === null || typeof answer.resultCode !== 'string')
        throw new AdyenError('invalid-answer', 'POST /payments', 'no resultCode in the answer');
      return answer;
    },
    async details(body, key) {
      const answer = (await call('POST /payments/details', '/payments/details', body, key)) as PaymentAnswer | undefined;
      if (typeof answer !== 'object' || answer === null || typeof answer.resultCode !== 'string')
        throw new AdyenError('invalid-answer', 'POST /payments/details', 'no resultCode in the answer');
      return answer;
    },
    async modify(kind, psp, body, key) {
      const operation = `POST /payments/{paymentPspReference}/${kind}`;
      const answer = (await call(operation, `/payments/${encodeURIComponent(psp)}/${kind}`, body, key)) as Partial<ModificationAnswer>;
      if (typeof answer?.pspReference !== 'string') throw new AdyenError('invalid-answer', operation, 'no pspReference in the answer');
      return answer as ModificationAnswer;
    },
    close: () => agent.close(),
  };
}

async function exchange(agent: Agent, c: AdyenConnection, operation: string, path: string, body: object, key: string): Promise<unknown> {
  let status: number;
  let text: string;
  const deadline = timeoutSignal(c.timeoutMs);
  try {
    const res = await request(`${c.checkoutUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': c.apiKey, 'idempotency-key': key },
      body: JSON.stringify(body),
      dispatcher: agent,
      headersTimeout: c.timeoutMs,
      bodyTimeout: c.timeoutMs,
      signal: deadline.signal,
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (error) {
    const e = error as { name?: string; code?: string; message?: string };
    const timedOut = e?.name === 'TimeoutError' || e?.name === 'AbortError' || /TIMEOUT/.test(e?.code ?? '');
    throw new AdyenError(
      timedOut ? 'timeout' : 'network',
      operation,
      timedOut ? `no answer within ${c.timeoutMs} ms` : `no HTTP answer: ${e?.code ?? e?.message ?? String(error)}`,
    );
  } finally {
    deadline.clear();
  }
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new AdyenError(status >= 500 ? 'server' : 'invalid-answer', operation, `HTTP ${status}, not JSON`, status);
  }
  if (status >= 200 && status < 300) return json;
  const problem = (json ?? {}) as { errorCode?: string; message?: string };
  const reason = `HTTP ${status}${problem.errorCode ? ` ${problem.errorCode}` : ''}${problem.message ? `: ${String(problem.message).slice(0, 200)}` : ''}`;
  // Final only when Adyen judged the request itself. Our credentials or account (401, 403), a key still
  // in use by the first attempt (409, errorCode 704) or a rate limit (429) are worth asking again.
  const again = status >= 500 || [401, 403, 409, 429].includes(status) || problem.errorCode === '704';
  throw new AdyenError(again ? 'server' : 'refused', operation, reason, status, problem.errorCode ?? null);
}
