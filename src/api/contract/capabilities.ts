/**
 * Spec part 5: the delegated capability each `/users/me*` route needs, for exports that do not
 * say it themselves (`x-delegation`). The most specific prefix wins; the rest of `/users/me`
 * (profile, preferences, alert preferences) is self-service.
 */
const BY_PREFIX: ReadonlyArray<[string, string]> = [
  ["/users/me/saved-views", "saved_views"],
  ["/users/me/custom-dashboards", "custom_dashboards"],
  ["/users/me/rgpd/export", "rgpd_export"],
  ["/users/me/rgpd/inventory", "rgpd_inventory"],
  ["/users/me/rgpd/erasure", "rgpd_erasure"],
  ["/users/me", "user_self_service"],
];

export function capabilityOf(path: string): string | null {
  for (const [prefix, capability] of BY_PREFIX)
    if (path === prefix || path.startsWith(`${prefix}/`)) return capability;
  return null;
}
