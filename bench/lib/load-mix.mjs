/**
 * The calls of the load runs: ten reads a portfolio manager's questions lead to, on ids the
 * deployment itself lists. One list, so `npm run load` and its fleet mode measure the same load.
 */
export async function readMix(client) {
  const first = async (name) =>
    (await client.callTool({ name, arguments: { limit: 1 } })).structuredContent.items[0].id;
  return [
    ["list_operations", { limit: 20 }],
    ["get_operation", { operation_id: await first("list_operations") }],
    ["list_deals", { limit: 20 }],
    ["get_deal", { deal_id: await first("list_deals") }],
    ["list_spvs", {}],
    ["list_calendar_events", {}],
    ["get_unread_notification_count", {}],
    ["get_my_profile", {}],
    ["list_my_saved_views", {}],
    ["list_my_dashboards", {}],
  ];
}
