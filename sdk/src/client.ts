// The two clients: SellerClient (the seller API, CONTRACT §2's key pair) and OperatorClient (the
// operator API, bearer token). One method per operation of the OpenAPI document, named after its
// operationId; each returns the success body typed from schema.ts and throws GatewayError otherwise.
import { randomUUID } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import { GatewayError } from './errors.ts';
import { type CallOptions, type Fetch, type PostOptions, type RetryPolicy, resolvePolicy, retryingFetch } from './http.ts';
import { type Page, type PageOptions, paginate } from './paging.ts';
import type { paths } from './schema.ts';

export interface ClientOptions extends RetryPolicy {
  /** The gateway's root, e.g. `http://127.0.0.1:3000` or `https://gateway.example`. */
  baseUrl: string;
  /** The fetch to send requests with (default: Node's global fetch). */
  fetch?: Fetch;
  /** Headers added to every request (e.g. a User-Agent). */
  headers?: Record<string, string>;
}

/** What every call hands to openapi-fetch besides its parameters and body. */
export type CallInit = {
  headers: Record<string, string>;
  fetch: Fetch;
  signal?: AbortSignal;
};

type Result<T> = Promise<{ data?: T; error?: unknown; response: Response }>;

/**
 * The POSTs the gateway deduplicates by Idempotency-Key (those whose operation declares the header):
 * retried even after a failure that leaves it unknown whether the gateway acted.
 */
export const DEDUPLICATED_POSTS: ReadonlySet<string> = new Set([
  '/api/sales',
  '/api/public/cashout',
  '/api/transactions/{id}/refund',
  '/api/transactions/{id}/med-defense',
  '/api/signing-secret/rotate',
]);

/** A path id: the number, or its canonical decimal text. */
export type Id = number | string;

const retryFields = ['timeoutMs', 'retries', 'retryBaseDelayMs', 'retryMaxDelayMs', 'maxRetryAfterMs'] as const;
const retryPolicyOf = (o: RetryPolicy): RetryPolicy => Object.fromEntries(retryFields.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));

/** What both clients share: the openapi-fetch client with the retrying transport, and the call helper. */
export abstract class GatewayClient {
  /** The underlying openapi-fetch client (auth headers and retrying transport included), for anything the methods do not cover. */
  readonly raw: Client<paths>;
  readonly baseUrl: string;
  readonly #policy: RetryPolicy;
  readonly #fetch: Fetch;

  protected constructor(options: ClientOptions, auth: Record<string, string>) {
    if (!/^https?:\/\//.test(options.baseUrl)) throw new TypeError(`baseUrl must be an http(s) URL, got ${JSON.stringify(options.baseUrl)}`);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#policy = retryPolicyOf(options);
    resolvePolicy(this.#policy); // checks the values now rather than at the first call
    this.#fetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    this.raw = createClient<paths>({
      baseUrl: this.baseUrl,
      headers: { ...options.headers, ...auth },
      fetch: retryingFetch(this.#policy, this.#fetch),
    });
  }

  /**
   * Sends one operation through `call` with the per-call transport (a POST gets its Idempotency-Key
   * here, so that an error can name it) and returns its success body; throws GatewayError on any
   * other answer, GatewayNetworkError when none came.
   */
  protected async send<T>(method: string, path: string, call: (init: CallInit) => Result<T>, options: PostOptions = {}): Promise<T> {
    const idempotencyKey = method === 'POST' ? (options.idempotencyKey ?? randomUUID()) : undefined;
    const stats = { attempts: 0 };
    const retryAmbiguousPost = options.retryAmbiguous ?? DEDUPLICATED_POSTS.has(path);
    const init: CallInit = {
      headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
      fetch: retryingFetch(resolvePolicy(this.#policy, retryPolicyOf(options)), this.#fetch, { stats, retryAmbiguousPost }),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const { data, error, response } = await call(init);
    if (!response.ok) throw new GatewayError(response.status, error, response.headers, { method, path, idempotencyKey, attempts: stats.attempts });
    return data as T;
  }

  /** Every item of a paged list, fetching pages lazily (see PageOptions for the bounds). */
  protected iterate<I>(fetchPage: (cursor: string | undefined, init: CallOptions) => Promise<Page<I>>, options: PageOptions = {}): AsyncGenerator<I> {
    return paginate(fetchPage, options);
  }
}

export const pathId = (id: Id): string => String(id);

/** The query with `limit` as the text the query string carries. */
export function queryOf<Q extends { limit?: number | string }>(query: Q): Omit<Q, 'limit'> & { limit?: string } {
  const { limit, ...rest } = query;
  return limit === undefined ? rest : { ...rest, limit: String(limit) };
}
