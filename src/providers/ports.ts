/**
 * What the gateway asks of payment providers (CONTRACT §11): one connector interface for every rail,
 * outbound operations and inbound messages turned into provider facts. The rest of the gateway sees
 * these ports only; each connector lives in its own folder beside this file.
 */
import type { TSchema } from 'typebox';
import type { CardBrand } from '../domain/card.ts';
import type { PixKeyType } from '../domain/pix-keys.ts';
import type { ProviderFact, ProviderName } from '../domain/provider-facts.ts';
import type { ProviderReference } from '../domain/provider-reference.ts';
import type { Refusal, Refused, Result } from '../domain/result.ts';
import type { ShippingInput } from '../domain/sale-request.ts';
import type { PaymentMethod, TransactionEvent } from '../domain/transaction-states.ts';

export type { ProviderName } from '../domain/provider-facts.ts';

export interface PixCharge {
  txid: string;
  brCode: string;
  /** STATIC: a BR Code with our key, nothing at the PSP; ACTIVE: an immediate charge at the PSP. */
  charge: 'STATIC' | 'ACTIVE';
  /** When the PSP made the charge (its calendario.criacao); null for a static code, or a date the PSP wrote unreadably. */
  madeAt: Date | null;
}
export interface PixChargeInput {
  amountCents: number;
  /** Null: a static BR Code that never expires (CONTRACT §11.1). */
  expiresInSeconds: number | null;
  /** The payer, when the sale names a CPF or CNPJ (the charge's `devedor`). */
  debtor: { name: string; document: string } | null;
  /**
   * 20 of [A-Za-z0-9], the same for every request of one Idempotency-Key and body for
   * `reference_kept_ms` after it is drawn (null: none): a charge asked for again under it must be
   * the one already made, not a second.
   */
  reference: string | null;
}

/** A boleto sale to register: what the payer's bank slip and the issuer need. */
export interface BoletoInput {
  saleId: number;
  amountCents: number;
  dueDate: string;
  customer: { name: string; email: string; document: string; phone: string | null };
  items: { title: string; unitPrice: number; quantity: number }[];
  shipping: ShippingInput | null;
  /** The key's reference (null: none): a boleto asked for again under a kept one is the one already registered, when the issuer has it. */
  reference: ProviderReference | null;
}
export interface BoletoIssued {
  externalId: string;
  barcode: string;
  digitableLine: string;
  /** The slip as a PDF at the issuer, when it makes one. */
  pdfUrl: string | null;
  /** The Pix BR Code of a boleto híbrido, when the issuer makes one. */
  pixCode: string | null;
}

export type CardOutcome = 'APPROVED' | 'DECLINED' | 'PROCESSING_ERROR';
export interface CardReference {
  /** null: the payment is known by the sale's own id (given at the write, in the same statement). */
  externalId: string | null;
  /** Kept with the sale (provider_data) for the provider's own later steps; never card data. */
  providerData: Record<string, unknown> | null;
}
/** A written card sale handed to a processor that decides over the network; the card lives only in memory. */
export interface CardSubmission {
  saleId: number;
  amountCents: number;
  method: 'CREDIT_CARD' | 'DEBIT_CARD';
  installments: number;
  card: { number: string; holderName: string; expirationMonth: number; expirationYear: number; cvv: string; brand: CardBrand };
  customer: { name: string; email: string; document: string | null; phone: string | null };
  shipping: { street: string; number: string; city: string; state: string; zipCode: string } | null;
}
/** What the processor answered: the moves to apply to the PENDENTE sale, and what to keep with it. */
export interface CardVerdict {
  /** The processor's id for the payment; null when it gave none (the sale keeps its reference). */
  externalId: string | null;
  events: TransactionEvent[];
  /** Kept with the sale; `error` says what did not go as planned (the processor's notifications repeat its word). */
  providerData: Record<string, unknown>;
}

/** A cashout to pay: its net amount to the seller's key (CONTRACT §8, §11.3). */
export interface PayoutInput {
  cashoutId: number;
  netCents: number;
  pixKey: string;
  pixKeyType: PixKeyType;
}
/** What a send came to: what the provider's records say of the payout, or nothing for good yet (sent again later). */
export type PayoutAttempt = { kind: 'facts'; facts: ProviderFact[] } | { kind: 'later'; retryAfterMs: number | null; why: string };

/** A provider's answer to a refund (CONTRACT §5a): settled now, or accepted and settled later. */
export type RefundOutcome = { status: 'SUCCEEDED' } | { status: 'FAILED'; reason: string } | { status: 'PENDING'; providerRef: string };
export interface RefundInput {
  refundId: number;
  amountCents: number;
  transactionId: number;
  paymentMethod: PaymentMethod;
  externalTransactionId: string;
  /** The Pix that paid a PIX sale (null when an operator event paid it). */
  pixEndToEndId: string | null;
}

/** What a connector is asked to withdraw: a charge nobody may pay any more, or money a sale cannot take. */
export type CancelTarget =
  | { kind: 'charge'; saleId: number; externalId: string }
  | { kind: 'payment'; paymentId: string; amountCents: number; key?: string };
/** SENT: the provider took it and will say how it ended; DONE; REFUSED for good (the operator sees why). */
export interface CancelOutcome {
  status: 'SENT' | 'DONE' | 'REFUSED';
  detail: string | null;
}

/**
 * One provider's connector. Each implements the operations its rail has; every call is made
 * outside any database transaction, after what it concerns is persisted, and is idempotent by a
 * key that carries the installation's id (a retry after a lost answer never moves money twice).
 */
export interface Connector {
  readonly name: ProviderName;
  /** PIX: the charge a sale is written with (a dynamic one is a PSP call, made before the write); a PSP that did not make it says why. */
  charge?(input: PixChargeInput): Promise<{ ok: true; charge: PixCharge } | { ok: false; reason: string }>;
  /** Boleto: registered before the sale is written (its id drawn first); an issuer that refused says why. */
  issueBoleto?(input: BoletoInput): Promise<{ ok: true; boleto: BoletoIssued } | { ok: false; reason: string }>;
  /** Boleto: how its charge stands at the issuer (reconciliation). Throws when it cannot be asked. */
  boletoFacts?(chargeId: string): Promise<ProviderFact[]>;
  /** Cards, at the sale's write (sync): the reference kept with it. The number is seen here and never stored. */
  reference?(input: { amountCents: number; installments: number; brand: CardBrand; number: string }): CardReference;
  /** Cards, after the write: a processor that decides over the network. Never throws: unreachable is a verdict too. */
  authorise?(sale: CardSubmission): Promise<CardVerdict>;
  /** Captures an authorised payment (manual capture); DONE's detail is the capture's reference. */
  capture?(payment: { saleId: number; paymentId: string; amountCents: number }): Promise<{ status: 'DONE' | 'REFUSED'; detail: string }>;
  /** Returns a sale's cents to the payer. Throws when the provider could not be reached: sent again later. */
  refund?(input: RefundInput): Promise<RefundOutcome>;
  cancel?(target: CancelTarget): Promise<CancelOutcome>;
  /** Sends a cashout (again, with the same key, when a round left it PENDING); never throws. */
  payout?(input: PayoutInput): Promise<PayoutAttempt>;
  /** How a cashout's payout stands at the provider; null when the provider never had it. Throws when it cannot be asked. */
  payoutFacts?(cashoutId: number): Promise<ProviderFact[] | null>;
}

/** A provider's message as it arrives, for an inbound endpoint. */
export interface InboundRequest {
  params: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
}

/**
 * Where a provider calls the gateway. `authenticate` runs before the body is read; `read` turns the
 * message into provider facts (confirming them with the provider where the message alone is not to
 * be trusted; a throw answers 502, and the provider sends it again). Every fact is stored and
 * applied before `answer` is sent.
 */
export interface InboundEndpoint {
  provider: ProviderName;
  url: string;
  body: TSchema;
  /** The provider posts a form (application/x-www-form-urlencoded), not JSON. */
  form?: boolean;
  authenticate(request: Pick<InboundRequest, 'params' | 'headers'>): { refusal: Refusal; headers?: Record<string, string> } | null;
  /** The facts; or a refusal, with the facts `confirmed` before it (applied all the same: the provider calls again for the rest). */
  read(request: InboundRequest): Promise<Result<ProviderFact[]> | (Refused & { confirmed: ProviderFact[] })>;
  /** What the provider is answered once every fact of `body` is stored. */
  answer(body: unknown): { contentType: string; body: unknown };
}

/** The connectors of this process: every rail chosen by configuration, and what reaches them. */
export interface Providers {
  /** The provider of new payments of each method, and of new cashouts. */
  readonly rails: Readonly<Record<PaymentMethod | 'PAYOUT', ProviderName>>;
  /** The connector of a provider (the one recorded on a transaction or cashout). */
  connector(name: ProviderName): Connector;
  readonly inbound: readonly InboundEndpoint[];
  /** The embedded PSP's lever (sandbox only): a payer's bank paying a charge. */
  readonly sandboxPix: { pay(txid: string, amountCents: number): Promise<{ endToEndId: string; valor: string; horario: string }> } | null;
  /** The embedded PSP's lever for boletos (BOLETO_PROVIDER=sandbox): a bank paying a charge. */
  readonly sandboxBoleto: { pay(chargeId: number, amountCents?: number): Promise<void> } | null;
  /** This process's own address, the callback base when no public one is configured. */
  listeningAt(baseUrl: string): void;
  close(): Promise<void>;
}

/** The connector's operation, or a bug: the rail was configured with a connector that lacks it. */
export function operation<K extends keyof Connector>(connector: Connector, name: K): NonNullable<Connector[K]> {
  const op = connector[name];
  if (typeof op !== 'function') throw new Error(`the ${connector.name} connector has no ${String(name)} operation`);
  return op.bind(connector) as NonNullable<Connector[K]>;
}
