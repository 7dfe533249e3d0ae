import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { PAGE_ERRORS, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../../http/paging.ts';
import type { Router } from '../../http/router.ts';
import { listNotifications } from '../delivery-log.ts';
import { Notification, notificationView } from '../notification-view.ts';
import { common } from './common.ts';

/** The delivery log (CONTRACT §3). */
export function listNotificationsRoute(app: Router, ctx: AppContext): void {
  app.get(
    '/api/notifications',
    {
      schema: {
        ...common,
        operationId: 'listNotifications',
        summary: 'The delivery log, newest first',
        querystring: Type.Object(PageQuery),
        response: responses({ 200: pageOf(Notification, 'NotificationPage') }, [...SELLER_ERRORS, ...PAGE_ERRORS]),
      },
    },
    async (request) => {
      const { limit, fetch, beforeId } = pageRequest(request.query);
      const rows = await listNotifications(ctx.db, request.sellerId, beforeId, fetch);
      return pageAnswer(rows, limit, (page) => page.map(notificationView));
    },
  );
}
