/**
 * The operator's reconciliation (CONTRACT §15): a day's report per account, and a run now. A run
 * reads every page of each provider's record, so it is answered 202 at once and goes on after.
 */
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { ApiError } from '../domain/errors.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { Fields, operatorSecurity, type Router } from '../http/router.ts';
import { accountRecords } from './accounts.ts';
import { isDay, yesterday } from './days.ts';
import { dayReport, ReconciliationDay } from './report.ts';
import { reconcileAccounts } from './run.ts';

const day_pattern = '^\\d{4}-\\d{2}-\\d{2}$';
const DayText = Type.String({ pattern: day_pattern, description: 'a calendar date of America/Sao_Paulo, YYYY-MM-DD' });

function checkedDay(day: string, field: string): string {
  if (!isDay(day)) throw new ApiError('VALIDATION_ERROR', `${field} is not a calendar date`, [{ field, message: 'must be a real date, YYYY-MM-DD' }]);
  return day;
}

const common = { tags: ['operator'], security: operatorSecurity };

export async function reconciliationRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/admin/reconciliation',
    {
      schema: {
        ...common,
        operationId: 'getReconciliation',
        summary: "A day's reconciliation of every provider account against the provider's own record",
        querystring: Type.Object({
          date: Type.Optional(
            Type.String({ pattern: day_pattern, description: 'a calendar date of America/Sao_Paulo, YYYY-MM-DD; yesterday when omitted' }),
          ),
        }),
        response: responses({ 200: ReconciliationDay }, [...OPERATOR_ERRORS, ['VALIDATION_ERROR', '`date` is not a calendar date']]),
      },
    },
    async (request) =>
      dayReport(
        ctx.db,
        request.query.date === undefined ? yesterday(ctx.clock.now()) : checkedDay(request.query.date, 'date'),
        accountRecords(ctx.providers).map((r) => r.account),
      ),
  );

  app.post(
    '/admin/reconciliation/run',
    {
      schema: {
        ...common,
        operationId: 'runReconciliation',
        summary: 'Reconcile a day now (every account, or one); answered at once, read the report after',
        body: Fields(
          { date: DayText, account: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'one account only' })) },
          { title: 'ReconciliationRun' },
        ),
        bodyExamples: { yesterday: { summary: 'A day of every account', value: { date: '2026-11-27' } } },
        response: responses(
          { 202: Type.Object({ date: Type.String({ format: 'date' }), accounts: Type.Array(Type.String()) }, { title: 'ReconciliationStarted' }) },
          [...OPERATOR_ERRORS, ...BODY_ERRORS, ['VALIDATION_ERROR', '`date` is not a calendar date, or `account` is not a configured account']],
        ),
      },
    },
    async (request, reply) => {
      const day = checkedDay(request.body.date, 'date');
      const accounts = accountRecords(ctx.providers)
        .map((r) => r.account.id)
        .filter((id) => request.body.account === undefined || id === request.body.account);
      if (accounts.length === 0)
        throw new ApiError('VALIDATION_ERROR', 'account is not a configured account', [
          { field: 'account', message: 'must be a configured account' },
        ]);
      void reconcileAccounts(ctx, day, request.body.account).catch((err: unknown) => request.log.error({ err, day }, 'reconciliation run failed'));
      return reply.status(202).send({ date: day, accounts });
    },
  );
}
