import type { BrandingSettings, BusinessSettings, ReportingSettings } from "../models/settings.js";
import { withCheckDigit } from "../siren.js";
import type { FamilySeed } from "./index.js";
import { DEMO_USERS } from "./users.js";

export interface SettingsData {
  settings: {
    business: BusinessSettings;
    reporting: ReportingSettings;
    branding: BrandingSettings;
  };
}

/**
 * The entity's settings as its administrators left them. The covenant thresholds are the ones
 * the seeded alerts were measured against (data/alerts.ts: LTV 55 %, DSCR 0.85).
 */
export const seedSettings: FamilySeed<SettingsData> = {
  family: "settings",
  seed(data, { random, at }) {
    const by = DEMO_USERS.camille;
    return {
      settings: {
        business: {
          legal_name: `${data.entity.name} SAS`,
          siren: withCheckDigit(String(random.int(40_000_000, 89_999_999))),
          amf_approval_number: `GP-${random.int(10_000_000, 19_999_999)}`,
          registered_address: "18 rue de la République, 69002 Lyon",
          base_currency: "EUR",
          fiscal_year_start_month: 1,
          default_locale: "fr-FR",
          ltv_covenant_max_pct: "55.00",
          dscr_floor: "0.85",
          operator_concentration_max_pct: "20.00",
          updated_at: at(-45),
          updated_by: by,
        },
        reporting: {
          frequency: "quarterly",
          deadline_days: 45,
          reminder_days_before: 10,
          recipients: [
            "comite.investissement@aurore-capital.example",
            "middle-office@aurore-capital.example",
          ],
          amounts_unit: "thousands",
          include_closed_operations: false,
          inrev_export_enabled: true,
          signatory: "Camille Martin, Directrice des investissements",
          updated_at: at(-30),
          updated_by: by,
        },
        branding: {
          display_name: data.entity.name,
          primary_color: "#1F3A5F",
          secondary_color: "#E8A33D",
          logo_url: "https://static.aurore-capital.example/logo.svg",
          report_footer: `${data.entity.name} – société de gestion agréée par l'AMF.`,
          email_signature: null,
          updated_at: at(-90),
          updated_by: by,
        },
      },
    };
  },
};
