/** Word lists for the demo data: a French real-estate investment manager. All names are fictional. */

export const ENTITY_NAME = "Aurore Capital Partners";

export const CITIES: ReadonlyArray<readonly [city: string, postcode: string]> = [
  ["Lyon", "69002"],
  ["Lyon", "69007"],
  ["Villeurbanne", "69100"],
  ["Bordeaux", "33000"],
  ["Mérignac", "33700"],
  ["Nantes", "44000"],
  ["Rezé", "44400"],
  ["Lille", "59000"],
  ["Roubaix", "59100"],
  ["Toulouse", "31000"],
  ["Blagnac", "31700"],
  ["Marseille", "13008"],
  ["Aix-en-Provence", "13100"],
  ["Montpellier", "34000"],
  ["Rennes", "35000"],
  ["Strasbourg", "67000"],
  ["Nice", "06000"],
  ["Annecy", "74000"],
  ["Grenoble", "38000"],
  ["Paris", "75011"],
  ["Paris", "75019"],
  ["Boulogne-Billancourt", "92100"],
  ["Saint-Denis", "93200"],
  ["Montreuil", "93100"],
  ["Tours", "37000"],
  ["Angers", "49000"],
  ["Dijon", "21000"],
  ["La Rochelle", "17000"],
];

export const PROGRAMME_PREFIXES = [
  "Les Terrasses",
  "Le Clos",
  "Les Jardins",
  "Résidence",
  "Îlot",
  "Le Carré",
  "Les Rives",
  "Villa",
  "Le Domaine",
  "Les Allées",
  "Cœur",
  "L'Atelier",
];

export const PROGRAMME_NAMES = [
  "des Vignes",
  "Confluence",
  "Saint-Exupéry",
  "du Parc",
  "Lumière",
  "des Tanneurs",
  "Belvédère",
  "de la Gare",
  "Horizon",
  "des Chartreux",
  "Pasteur",
  "du Canal",
  "Émeraude",
  "des Halles",
  "Garonne",
  "Solférino",
  "des Arts",
  "Bellevue",
  "Voltaire",
  "de l'Écluse",
];

export const SOUS_CLASSES: Record<string, readonly string[]> = {
  residentiel: [
    "Logement collectif",
    "Résidence étudiante",
    "Résidence seniors",
    "Maisons individuelles",
  ],
  bureaux: ["Bureaux neufs", "Bureaux restructurés"],
  commerce: ["Pied d'immeuble", "Retail park"],
  logistique: ["Messagerie urbaine", "Entrepôt"],
  hotellerie: ["Hôtel 3 étoiles", "Aparthotel"],
  sante: ["EHPAD", "Clinique"],
  mixte: ["Logements et commerces", "Bureaux et logements"],
};

export const OPERATOR_NAMES = [
  "Rhône Habitat Promotion",
  "Atlantique Développement",
  "Bastide & Associés",
  "Cerca Immobilier",
  "Groupe Vauban Résidences",
  "Maisons de l'Estuaire",
  "Nordis Promotion",
  "Occitane Patrimoine",
  "Provence Foncière",
  "Alpes Horizon Immobilier",
  "Loire Valley Invest",
  "Urbanéo Réhabilitation",
  "Capitole Marchand de Biens",
  "Saône Asset Management",
  "Grand Est Bâtisseurs",
  "Bretagne Construction Générale",
  "Côte d'Azur Résidences",
  "Foncière des Quais",
  "Méridien Entreprise Générale",
  "Hexagone Promotion",
  "Dauphiné Aménagement",
  "Gironde Patrimoine",
  "Flandres Foncière",
];

export const FORMES = ["SAS", "SARL", "SA", "SCCV", "SNC"];

export const FIRST_NAMES = [
  "Camille",
  "Julien",
  "Sophie",
  "Thomas",
  "Léa",
  "Nicolas",
  "Claire",
  "Antoine",
  "Manon",
  "Hugo",
  "Inès",
  "Mathieu",
];

export const LAST_NAMES = [
  "Martin",
  "Bernard",
  "Leroy",
  "Petit",
  "Moreau",
  "Lefèvre",
  "Garnier",
  "Roux",
  "Fournier",
  "Girard",
  "Mercier",
  "Blanc",
];

export const FUNDS: ReadonlyArray<readonly [name: string, strategy: string, vintage: number]> = [
  ["Aurore Immobilier Rendement I", "Dette senior promotion", 2019],
  ["Aurore Immobilier Rendement II", "Dette senior promotion", 2021],
  ["Aurore Mezzanine Résidentiel", "Dette mezzanine résidentiel", 2020],
  ["Aurore Value-Add Régions", "Fonds propres value-add", 2022],
  ["Aurore Santé & Services", "Immobilier de santé", 2023],
  ["Aurore Logistique Urbaine", "Logistique du dernier kilomètre", 2024],
];

export const DEAL_THEMES = [
  "Acquisition foncier",
  "Refinancement",
  "Portefeuille",
  "Réhabilitation",
  "Promotion",
  "Value-add",
];
