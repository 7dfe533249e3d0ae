/**
 * What the gateway asks of payment providers (CONTRACT §11): one port per capability (a PIX PSP, a
 * card processor, a boleto issuer, a payout sender), each implemented whole by a connector for one
 * account, and inbound messages turned into provider facts. The rest of the gateway sees these
 * ports only; each connector lives in its own folder beside this file.
 */
import type { TSchema } from 'typebox';
import type { CardBrand } from '../domain/card.ts';
import type { PixKeyType } from '../domain/pix-keys.ts';
import type { ProviderFact, ProviderName } from '../domain/provider-facts.ts';
import type { ProviderReference } from '../domain/provider-reference.ts';
import type { Refusal, Refused, Result } from '../domain/result.ts';
import type { ShippingInput } from '../domain/sale-request.ts';
import type { PaymentMethod } from '../domain/transaction-states.ts';
import type { CardAnswer, CardReference, CardSubmission } from './card-port.ts';
import type { ProviderMovement, RecordReader } from './record.ts';

export type { ProviderName } from '../domain/provider-facts.ts';
export type { CardAnswer, CardAuthentication, CardOutcome, CardReference, CardSubmission, ShopperAction } from './card-port.ts';

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
export type RefundOutcome =
  /** `providerRef`: the refund's reference at a provider that refunds at once (what its record names). */
  { status: 'SUCCEEDED'; providerRef?: string } | { status: 'FAILED'; reason: string } | { status: 'PENDING'; providerRef: string };
export interface RefundInput {
  refundId: number;
  amountCents: number;
  transactionId: number;
  paymentMethod: PaymentMethod;
  externalTransactionId: string;
  /** The Pix that paid a PIX sale (null when an operator event paid it). */
  pixEndToEndId: string | null;
}

/** A payment given back whole, that a sale cannot take (a Pix devolução, an Adyen reversal); `key` when not the connector's usual one. */
export interface GiveBack {
  paymentId: string;
  amountCents: number;
  key?: string;
}
/** SENT: the provider took it and will say how it ended; DONE; REFUSED for good (the operator sees why). */
export interface CancelOutcome {
  status: 'SENT' | 'DONE' | 'REFUSED';
  detail: string | null;
  /** The provider's reference of a payment given back (a devolução's rtrId), what its record names. */
  reference?: string;
}

/**
 * An account (CONTRACT §11): a connector with its credentials, named by a stable id derived from
 * the connector and the account's own identity at the provider (never a secret). Sales, refunds
 * and cashouts record it, and everything after goes to it, whatever is configured today.
 */
export interface Account {
  readonly id: string;
  readonly connector: ProviderName;
}

/**
 * The capability ports. A connector implements each capability it has completely; every call is
 * made outside any database transaction, after what it concerns is persisted, and is idempotent by
 * a key that carries the installation's id (a retry after a lost answer never moves money twice).
 * `sync` reads one subject back from the provider and answers what its record says, as facts.
 */
export interface PixPsp {
  readonly capability: 'PIX';
  readonly account: Account;
  /** The charge a sale is written with (a dynamic one is a PSP call, made before the write); a PSP that did not make it says why. */
  charge(input: PixChargeInput): Promise<{ ok: true; charge: PixCharge } | { ok: false; reason: string }>;
  /** Removes a charge nobody may pay any more; removed or paid already is DONE. */
  removeCharge(txid: string): Promise<CancelOutcome>;
  /** A devolução of the Pix that paid the sale. Throws when the PSP could not be reached: sent again later. */
  refund(input: RefundInput): Promise<RefundOutcome>;
  /** Returns whole a Pix that paid nothing. */
  giveBack(payment: GiveBack): Promise<CancelOutcome>;
  /** The Pix `endToEndId` as the PSP records it, and its devoluções; [] when the PSP has none. Throws when it cannot be asked. */
  sync(endToEndId: string): Promise<ProviderFact[]>;
  /** Its record of money (CONTRACT §15): the Pix received in a window, with their devoluções. */
  record: RecordReader;
  /** The devoluções of these Pix, read one by one (the record lists a devolução under the day of its Pix). */
  devolucoesOf(endToEndIds: string[]): Promise<ProviderMovement[]>;
  /** MED 2.0 (CONTRACT §11.5): the PSP's infractions, when it reports them (PIX_MED_SOURCE=efi). */
  infractions?: InfractionSource;
}

/** A PSP's infractions: listed as facts, and the receiver's defence sent to it. */
export interface InfractionSource {
  /** The infractions of a window, page after page, each one a fact. */
  pages(window: { inicio: Date; fim: Date }): AsyncGenerator<ProviderFact[]>;
  /** The defence; a refusal comes back with the PSP's reason. Throws when the PSP could not be reached. */
  defend(infractionId: string, justification: string): Promise<{ ok: true } | { ok: false; reason: string }>;
}

export interface CardProcessor {
  readonly capability: 'CARD';
  readonly account: Account;
  /** At the sale's write (sync): the reference kept with it. The number is seen here and never stored. */
  reference(input: { amountCents: number; installments: number; brand: CardBrand; number: string }): CardReference;
  /** After the write: the processor's word on the payment, as facts (none when it decides later), and the shopper's next step. Never throws. */
  authorise(sale: CardSubmission): Promise<CardAnswer>;
  /**
   * The shopper is back from the issuer (3-D Secure) with `redirectResult`: the payment's result, as
   * facts. Called once per sale (the first return). Never throws.
   */
  details(input: { saleId: number; redirectResult: string; providerData: Record<string, unknown> | null }): Promise<ProviderFact[]>;
  /** Captures an authorised payment (manual capture); DONE's detail is the capture's reference. */
  capture(payment: { saleId: number; paymentId: string; amountCents: number }): Promise<{ status: 'DONE' | 'REFUSED'; detail: string }>;
  refund(input: RefundInput): Promise<RefundOutcome>;
  /** Reverses a payment the sale cannot take (cancelled if uncaptured, refunded otherwise). */
  giveBack(payment: GiveBack): Promise<CancelOutcome>;
  /**
   * The payment as the processor records it, as facts; null for a processor that cannot be asked
   * (Adyen's Checkout API has no read of a payment: its notifications are its record).
   */
  sync(sale: { saleId: number; paymentId: string }): Promise<ProviderFact[] | null>;
  /** Its record of money (CONTRACT §15): the payments settled, refunded and charged back, and its fees. */
  record?: RecordReader;
  /** How much later than the gateway it books a movement (a processor settles in batches, days after). */
  readonly settlesWithinMs?: number;
}

export interface BoletoIssuer {
  readonly capability: 'BOLETO';
  readonly account: Account;
  /** Registered before the sale is written (its id drawn first); an issuer that refused says why. */
  issue(input: BoletoInput): Promise<{ ok: true; boleto: BoletoIssued } | { ok: false; reason: string }>;
  /** Cancels the charge of a sale that can no longer be paid; REFUSED when it is paid or gone. */
  cancel(chargeId: string): Promise<CancelOutcome>;
  /** Returns a paid boleto's cents (an issuer that cannot by API says so: FAILED with the reason). */
  refund(input: RefundInput): Promise<RefundOutcome>;
  /** How its charge stands at the issuer. Throws when it cannot be asked. */
  sync(chargeId: string): Promise<ProviderFact[]>;
  /** Its record of money (CONTRACT §15): the boletos paid in a window. */
  record?: RecordReader;
}

export interface PayoutSender {
  readonly capability: 'PAYOUT';
  readonly account: Account;
  /** Sends a cashout (again, with the same key, when a round left it PENDING); never throws. */
  send(input: PayoutInput): Promise<PayoutAttempt>;
  /** The cashout's payout at the provider; null when the provider never had it. Throws when it cannot be asked. */
  sync(cashoutId: number): Promise<ProviderFact[] | null>;
  /** The cashout a payout reference of this installation names (a callback's idEnvio); null when it is not ours. */
  cashoutOf(reference: string): number | null;
  /** Its record of money (CONTRACT §15): the Pix sent in a window, and their returns. */
  record?: RecordReader;
  /** The account's balance now, in cents, where the provider reports one (null otherwise). */
  balance?(): Promise<number | null>;
}

export type Port = PixPsp | CardProcessor | BoletoIssuer | PayoutSender;
/** The ports a sale is made with: each refunds what it took. */
export type SalePort = PixPsp | CardProcessor | BoletoIssuer;
export type Capability = Port['capability'];
export type PortOf<C extends Capability> = Extract<Port, { capability: C }>;

/** The port each rail is made with. */
export interface RailPorts {
  PIX: PixPsp;
  CREDIT_CARD: CardProcessor;
  DEBIT_CARD: CardProcessor;
  BOLETO: BoletoIssuer;
  PAYOUT: PayoutSender;
}

/** The capability each payment method is made with. */
export const CAPABILITY_OF: Readonly<Record<PaymentMethod | 'PAYOUT', Capability>> = {
  PIX: 'PIX',
  CREDIT_CARD: 'CARD',
  DEBIT_CARD: 'CARD',
  BOLETO: 'BOLETO',
  PAYOUT: 'PAYOUT',
};

/** An account a transaction, refund or cashout was made with that this process no longer has (CONTRACT §11). */
export class AccountNotConfigured extends Error {
  constructor(
    readonly capability: Capability,
    readonly account: string,
  ) {
    super(`account ${account} not configured`);
    this.name = 'AccountNotConfigured';
  }
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

/**
 * The registry of this process (capability → account → port): the account new payments of each
 * method and new cashouts are made with, and every account configured. Whatever was made with an
 * account goes to that account's port; one that is not configured fails, never goes elsewhere.
 */
export interface Providers {
  /** The account of new payments of each method, and of new cashouts. */
  readonly rails: Readonly<Record<PaymentMethod | 'PAYOUT', string>>;
  /** The port of `account`; throws AccountNotConfigured. */
  port<C extends Capability>(capability: C, account: string): PortOf<C>;
  /** The port new payments of `method` (or new cashouts) are made with. */
  rail<M extends keyof RailPorts>(method: M): RailPorts[M];
  /** Every configured port of a capability (the jobs that read each account back). */
  all<C extends Capability>(capability: C): PortOf<C>[];
  /**
   * Another account (a second PSP, a test's processor): one line, and it takes part like the
   * configured ones; with `rail`, new payments of those methods are made with it from then on (as
   * after a change of configuration), while what was made before stays with its own account.
   */
  add(port: Port, options?: { rail?: (keyof RailPorts)[] }): void;
  readonly inbound: readonly InboundEndpoint[];
  /** This process's own address, the callback base when no public one is configured (kept for the installation's workers). */
  listeningAt(baseUrl: string): Promise<void>;
  close(): Promise<void>;
}
