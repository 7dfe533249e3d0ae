/**
 * The sandbox's MED levers (CONTRACT §11.5, PIX_PROVIDER=sandbox with its infractions read): the
 * payer's bank contests a paid sale's Pix at the embedded PSP, and later the BCB decides. Each answers
 * once the gateway has polled the PSP, so the sale's status in the answer is the gateway's own.
 */
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import { ApiError } from '../domain/errors.ts';
import { TRANSACTION_STATUSES } from '../domain/transaction-states.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { Fields, Nullable, operatorSecurity, PathId, type Router, StringEnum } from '../http/router.ts';
import { type PollingPort, pollInfractions } from '../providers/med/infraction-poll.ts';
import type { SandboxLevers } from '../providers/sandbox/ports.ts';

const Outcome = Type.Object(
  {
    idInfracao: Type.String({ description: "the infraction's id at the PSP" }),
    transactionId: Nullable(Type.Integer({ description: "the contested sale; null when the Pix is not this installation's" })),
    status: Nullable(StringEnum(TRANSACTION_STATUSES, { description: "the sale's status once the gateway read the PSP" })),
  },
  { title: 'SandboxInfraction' },
);

const unavailable = () => new ApiError('NOT_FOUND', 'The sandbox PSP reports infractions only with PIX_PROVIDER=sandbox and PIX_MED_SOURCE=efi');

function levers(ctx: AppContext): NonNullable<SandboxLevers['med']> {
  return (
    ctx.sandbox.med ??
    (() => {
      throw unavailable();
    })()
  );
}

/** The gateway reads the PSP now; a round that fails is the worker's to do again, and the answer says the sale as it stands. */
async function pollNow(ctx: AppContext, med: NonNullable<SandboxLevers['med']>) {
  await pollInfractions(ctx, med.port as PollingPort, { overlapMs: 60_000 }).catch(() => {});
}

async function saleStatus(ctx: AppContext, id: number): Promise<(typeof TRANSACTION_STATUSES)[number]> {
  return maybeOne(await run<{ status: (typeof TRANSACTION_STATUSES)[number] }>(ctx.db, sql`SELECT status FROM transactions WHERE id = ${id}`))!
    .status;
}

export async function sandboxMedRoutes(app: Router, ctx: AppContext): Promise<void> {
  openRoute(app, ctx);
  resolveRoute(app, ctx);
}

function openRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/sandbox/sales/:id/infraction',
    {
      schema: {
        operationId: 'sandboxOpenInfraction',
        summary: "Sandbox: the payer's bank contests a paid PIX sale (MED 2.0)",
        description:
          'PIX_PROVIDER=sandbox with PIX_MED_SOURCE=efi (its default). The embedded PSP opens an infraction (ABERTA) on the Pix that paid the sale; ' +
          'the gateway reads it at once: PAGO → MED, the net blocked, the seller notified.',
        tags: ['operator'],
        security: operatorSecurity,
        params: PathId,
        response: responses({ 201: Outcome }, [
          ...OPERATOR_ERRORS,
          ['BAD_REQUEST', '`id` is not a positive integer, or the URL is malformed'],
          ['NOT_FOUND', 'no sale has this id, or the sandbox PSP does not report infractions here'],
          ['INVALID_TRANSITION', 'the sale was not paid by a Pix at the sandbox PSP, or an infraction of it is still open'],
        ]),
      },
    },
    async (request, reply) => {
      const med = levers(ctx);
      const id = parsePathId(request.params.id);
      const sale = maybeOne(
        await run<{ pix_end_to_end_id: string | null; account: string | null }>(
          ctx.db,
          sql`SELECT pix_end_to_end_id, coalesce(paid_account, account) AS account FROM transactions WHERE id = ${id}`,
        ),
      );
      if (!sale) throw new ApiError('NOT_FOUND', 'No sale has this id');
      if (sale.pix_end_to_end_id === null || sale.account !== med.port.account.id)
        throw new ApiError('INVALID_TRANSITION', 'Only a sale paid by a Pix received at the sandbox PSP can be contested');
      let opened: { idInfracao: string };
      try {
        opened = await med.open(sale.pix_end_to_end_id);
      } catch (error) {
        throw new ApiError('INVALID_TRANSITION', `The sandbox PSP did not open it: ${error instanceof Error ? error.message : String(error)}`);
      }
      await pollNow(ctx, med);
      return reply.status(201).send({ idInfracao: opened.idInfracao, transactionId: id, status: await saleStatus(ctx, id) });
    },
  );
}

function resolveRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/sandbox/infractions/:idInfracao/resolve',
    {
      schema: {
        operationId: 'sandboxResolveInfraction',
        summary: 'Sandbox: the BCB decides an infraction (MED 2.0)',
        description:
          'REJEITADA: the MED is won, MED → PAGO, the block released. ACEITA: the payer is right; the embedded PSP then returns the money by a MED ' +
          'devolução, and the gateway applies MED → ESTORNADO when it hears of it.',
        tags: ['operator'],
        security: operatorSecurity,
        params: Type.Object({ idInfracao: Type.String({ pattern: '^[A-Za-z0-9._-]{1,100}$' }) }),
        body: Fields({ status: StringEnum(['ACEITA', 'REJEITADA'] as const) }, { title: 'SandboxInfractionDecision' }),
        bodyExamples: {
          rejected: { summary: 'The seller wins', value: { status: 'REJEITADA' } },
          accepted: { summary: 'The payer wins: the money goes back', value: { status: 'ACEITA' } },
        },
        response: responses({ 200: Outcome }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          ['VALIDATION_ERROR', '`status` is not ACEITA or REJEITADA'],
          ['BAD_REQUEST', 'the URL is malformed'],
          ['NOT_FOUND', 'the sandbox PSP has no infraction with this id, or it does not report infractions here'],
          ['INVALID_TRANSITION', 'the infraction was decided already'],
        ]),
      },
    },
    async (request) => {
      const med = levers(ctx);
      const { idInfracao } = request.params;
      try {
        await med.resolve(idInfracao, request.body.status);
      } catch (error) {
        const words = error instanceof Error ? error.message : String(error);
        if ((error as { statusCode?: number }).statusCode === 404)
          throw new ApiError('NOT_FOUND', `The sandbox PSP has no such infraction: ${words}`);
        throw new ApiError('INVALID_TRANSITION', `The sandbox PSP did not decide it: ${words}`);
      }
      await pollNow(ctx, med);
      const ours = maybeOne(
        await run<{ transaction_id: number }>(ctx.db, sql`SELECT transaction_id FROM med_infractions WHERE id_infracao = ${idInfracao}`),
      );
      const id = ours ? Number(ours.transaction_id) : null;
      return { idInfracao, transactionId: id, status: id === null ? null : await saleStatus(ctx, id) };
    },
  );
}
