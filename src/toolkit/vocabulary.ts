import { folded } from "../fold.js";

/**
 * The portfolio's vocabulary in French and English, in one file: how portfolio managers say
 * things, mapped to the words the data and the contract use. Two readers:
 *
 * - search_portfolio asks the API for each way of saying a query in the words of a group below
 *   ("rapport trimestriel" is also asked as "reporting trimestriel", the documents' own title);
 * - find_api_operations widens a query's words to the contract's words (longtail/search.ts), with
 *   the groups and with the request words that follow them.
 *
 * Each entry is [the contract's words, what people say]. What people say is a comma-separated
 * list: a single word matches any inflection (find_api_operations stems it like the query),
 * several words match that expression, and `=word` matches that exact form only (for forms whose
 * stem means something else: "reporte" postpones, "report" reports). Domain words, not test
 * answers: an entry belongs here when a user could say it about any operation, entity or record.
 */
type Entry = readonly [contract: string, says: string];

/**
 * Names of the portfolio's records and documents: each group says one thing in both languages,
 * the data's own word first (what the demo data and the API mostly use), so that either
 * language finds the other's records. A word belongs to one group, and to no request entry.
 */
export const PORTFOLIO_WORDS: readonly Entry[] = [
  ["report reporting", "reporting, rapport, report"],
  // A quarterly or annual report is a document the operator delivers (category reporting); a
  // reporting template is not quarterly.
  ["document", "trimestriel, quarterly, trimestre, quarter"],
  ["document", "annuel, annual, yearly"],
  ["document", "mensuel, monthly"],
  [
    "repayment schedule",
    "échéancier, repayment schedule, tableau d'amortissement, amortization schedule, plan de remboursement, amortissement, amortization, échéances, instalments, installments",
  ],
  ["repayment", "remboursement, repayment, paiement, payment, versement, virement, encaissement"],
  ["due", "échéance, maturity, deadline"],
  ["operation", "prêt, loan"],
  [
    "operator",
    "opérateur, operator, promoteur, developer, sponsor, emprunteur, borrower, contrepartie, counterparty, marchand de biens",
  ],
  ["calendar event", "assemblée générale, general meeting, ag"],
  ["document", "contrat de prêt, loan agreement, facility agreement"],
  ["document", "rapport d'expertise, valuation report, expertise, appraisal"],
  ["document", "comptes annuels, annual accounts, financial statements"],
  ["document", "statuts, articles of association, bylaws"],
  ["document", "procès-verbal, minutes, pv"],
  ["document", "grille de commercialisation, sales grid, grille de prix"],
  ["document", "business plan, plan d'affaires"],
  ["document", "mise en demeure, formal notice"],
  ["document", "note de crédit, credit memo, credit note"],
];

/**
 * How people ask for what the contract's operations do: verbs, states and notions of the
 * application, in both languages, mapped to the contract's words (find_api_operations only).
 */
export const REQUEST_WORDS: readonly Entry[] = [
  // Fillers: expressions that say nothing about the operation ("right now" has no rights)
  ["", "right now, right away, asap, as soon as possible, s il te plait, s il vous plait"],

  // Verbs: what is done to a record
  ["acknowledge", "acquitter, acquittement, ack, acked, accuser reception, prendre en compte"],
  [
    "resolve clos",
    "resoudre, resolu, resolue, cloturer, clore, fermer, solder, close, fix, regle, =resous, =resolvez",
  ],
  ["maitrise status", "maitrise, maitrisee, sous controle, under control, mitigated, mitige"],
  [
    "postpone until",
    "=reporte, =reporter, =reportez, =reportee, =reporter, repousser, snooze, defer, later, differer, plus tard",
  ],
  ["change date", "decaler, decale, reschedule, reprogrammer, avancer la date, changer la date"],
  ["false positive", "faux positif, fausse alerte, false alarm, pas une vraie alerte"],
  ["mark", "marquer, flag"],
  ["read", "lu, lue, lus, lues, seen"],
  ["unread", "non lu, non lue, non lus, non lues, pas lu, pas lues, nouvelles"],
  ["list", "liste, lister, enumerer"],
  ["newest", "dernier, derniere, derniers, dernieres, latest, most recent, plus recent, recent"],
  ["all", "everything, tout, tous, toutes, ensemble"],
  ["count", "count, compter, nombre de, number of"],
  ["create", "creer, nouveau, nouvelle, new, ajouter, add, setup"],
  ["add", "ajouter, rajouter, ajout, insert"],
  [
    "update change",
    "relever, augmenter, baisser, abaisser, raise, lower, increase, decrease, modifier, modification, changer, mettre a jour, mets a jour, maj, edit, editer, corriger, correct, amend, set",
  ],
  ["update change name", "renommer, rename"],
  ["update change category", "ranger, classer, reclasser, categoriser, categorize, file under"],
  ["name", "nom, intitule, titre"],
  ["delete", "supprimer, suppression, effacer, enlever, remove, drop, doublon, duplicate"],
  [
    "move status",
    "deplacer, bouger, passer, passe, avancer, faire avancer, shift, transition, bump, promote, advance to, progress to",
  ],
  ["status", "statut, etape, stage, phase, state, etat"],
  ["accept", "accepter, approuver, approve, agree, ok pour"],
  ["reject", "refuser, rejeter, decliner, decline, deny, refus"],
  ["upload", "televerser, uploader, deposer, depot, mettre en ligne, charger, verser au dossier"],
  [
    "download file",
    "telecharger, recuperer le fichier, fetch the file, get the file, ouvrir le fichier",
  ],
  [
    "attach",
    "rattacher, attacher, lier, associer, link, joindre, affecter, assign to, rattachement",
  ],
  ["detach", "detacher, delier, dissocier, unlink, retirer de, remove from"],
  ["record", "enregistrer, saisir, log, consigner, declarer"],
  ["invite", "inviter, invitation, onboard, onboarder, donner acces"],
  [
    "suspend",
    "=block, block access, revoke access, cut access, couper l acces, suspendre, suspends, bloquer l acces, revoquer, revoke, offboard, quitte, left the company, desactiver, deactivate",
  ],
  ["activate enable", "activer, reactiver, reactivate, unsuspend, debloquer, turn on"],
  ["disable toggle", "desactiver, couper, turn off, switch off, mettre en pause, pause"],
  ["cancel disable toggle", "arreter, stop, stopper"],
  [
    "enable toggle",
    "turn back on, switch on, switch back on, back on, remettre en route, rallumer",
  ],
  ["password reset", "mot de passe, mdp, reinitialiser, reinitialisation, reset, password"],
  [
    "send again invitation",
    "renvoyer, renvoie, relancer l invitation, resend, send again, nouvelle invitation",
  ],
  ["send", "envoyer, envoie, mail"],
  ["cancel", "annuler, abandonner le job, abort, interrompre"],
  [
    "run now",
    "lancer, =executer, =execute, =executez, declencher, trigger, launch, maintenant, immediatement, tout de suite",
  ],
  ["start", "demarrer, lancer, commencer, kick off"],
  [
    "preview table",
    "rendu, =render, previsualiser, previsualisation, apercu, voir le rendu, essayer, tester, dry run",
  ],
  ["export xlsx workbook", "exporter, excel, xlsx, classeur, tableur, spreadsheet, fichier excel"],
  ["import", "importer, chargement en masse, bulk, csv, en masse"],
  ["replace", "remplacer, ecraser, overwrite, refaire, redefinir"],
  [
    "reorder position",
    "reordonner, reorganiser, remonter, descendre, prioriser, en haut, en bas, top, first, premier, ordre, order",
  ],
  ["confirm", "confirmer, credite, credited, encaisse, cleared, bank confirmed"],
  [
    "sharing share",
    "partager, partage, diffuser, share with, visible, visibilite, visibility, prive, private",
  ],
  ["saved view", "vue, view, filtre enregistre, vue enregistree"],
  ["saved view create", "sauvegarder, sauvegarde, save, save as, enregistrer sous"],
  ["search", "rechercher, chercher, trouver, find, look for, retrouver, tout ce qui"],
  [
    "search operations deals operators funds",
    "partout, anywhere, across, recherche globale, global search, search everything, search for everything",
  ],
  [
    "indexed content text documents",
    "mentionne, mention, mentioning, parle de, parlent de, contient, contiennent, contain, containing, dans le texte, plein texte, full text",
  ],
  [
    "check validate",
    "verifier, valider, valide, valid, controler, cle de controle, checksum, check digit",
  ],
  ["forget cache", "oublier, vider, purger, clear, flush, invalidate, en cache, cached"],
  ["follow", "suivre, ou en est, where is, status of, progress, avancement, progression"],
  [
    "narrative",
    "written update, written summary, write up, resumer, resume, synthese, recit, narratif, narration, point de situation, situation, ou en est l operation, where it stands, brief, raconter, raconte, histoire, story, tell me about",
  ],

  // Records and notions
  ["alert", "alerte, warning, avertissement"],
  ["critical", "critique, critiques, urgent, grave, severe"],
  ["notification", "notif, notifs"],
  [
    "deal pipeline",
    "affaire, opportunite, opportunity, pipe, deal flow, prospect, dossier en cours",
  ],
  ["operation", "operation, projet, programme, financement, investissement, actif, asset"],
  ["fund", "fonds, fond, vehicule d investissement, fcpi, fpci, opci"],
  ["spv", "sci, sas, societe de projet, holding, special purpose vehicle, vehicule"],
  [
    "risk third party",
    "risque, litige, litigation, dispute, contentieux, tiers, tierce, third party",
  ],
  ["note", "commentaire, remarque, compte rendu, memo, cr"],
  ["follow up note", "note de suivi, notes de suivi, suivi"],
  [
    "document",
    "pv d ag, proces verbal d ag, facture, invoice, piece, fichier, file, pdf, acte, contrat, bail, lease, scan, justificatif, term sheet, docx",
  ],
  ["dataroom", "data room, salle de donnees, vdr"],
  ["task", "tache, todo, to do, action item, relance"],
  ["board kanban column", "kanban, tableau des taches, colonne, column, board"],
  ["label", "etiquette, tag, libelle"],
  ["in progress status", "en cours, in progress, ongoing, wip"],
  ["todo status task", "reste a faire, left to do, what s left, a faire, to do, todo"],
  ["blocked status", "bloque, bloquee, bloques, bloquees, coince, stuck"],
  ["done status", "termine, terminee, fait, finie, finished, complete"],
  [
    "calendar event",
    "calendrier, agenda, planning, evenement, rdv, rendez vous, meeting, reunion, visite, visit, comite",
  ],
  ["proposed", "propose, proposee, proposees, proposition, suggere, suggested, suggestion"],
  [
    "date",
    "jour, day, demain, tomorrow, semaine, week, mois, month, janvier, fevrier, mars, avril, mai, juin, juillet, aout, septembre, octobre, novembre, decembre, january, february, march, april, june, july, august, september, october, november, december, quand, when",
  ],
  ["manual", "manuel, manuellement, by hand, a la main"],
  ["due", "echu, echue, exigible, due date"],
  [
    "late unpaid due",
    "en retard, retard, retards, impaye, impayes, overdue, arriere, arrieres, past due",
  ],
  ["repayment", "rembourser, repaid, paid"],
  ["pending", "en attente, a confirmer, non confirme"],
  ["template", "modele, gabarit, trame, maquette"],
  ["inrev", "inrev"],
  [
    "workflow",
    "workflow, automatisation, automatiser, automation, regle, rule, robot, process, processus",
  ],
  [
    "preset",
    "disponible, available, catalogue, catalog, predefini, predefined, built in, standard",
  ],
  ["recommendation", "recommandation, recommander, recommend, suggerer, conseil"],
  ["execution", "execution, passage, run history, last run"],
  ["failed status", "echec, echoue, fail, failure, erreur, error, plante, crashed"],
  ["history", "historique, journal, log, audit, trace"],
  [
    "timeline event",
    "chronologie, frise, historique, timeline, what happened, s est passe, passe sur, events, evenements",
  ],
  ["since", "depuis, after, apres"],
  [
    "ai extraction extract",
    "ia, ai, intelligence artificielle, extraire, extrais, extraction, extract, ocr, pull out, parse, lire le document",
  ],
  ["results", "resultats, result, output, champs extraits"],
  ["job", "traitement, batch"],
  [
    "user",
    "utilisateur, collaborateur, membre, member, equipe, team, compte, account, personne, people, who, analyste, analyst",
  ],
  ["profile", "profil, my account, mon compte"],
  ["get", "fiche, detail, details, record card"],
  ["job title", "poste, fonction, job title, intitule de poste, role"],
  [
    "display preferences",
    "preferences, affichage, display, format des nombres, number format, densite, density, compact, langue, language, page d accueil, landing",
  ],
  ["number format", "nombres, chiffres, format, numbers, decimal"],
  [
    "alert preferences",
    "preferences d alerte, alert settings, digest, email digest, resume par email, mute, sourdine, muet, push, notification settings, notification preferences, parametres de notification, reglages des notifications, preferences de notification",
  ],
  ["dashboard", "tableau de bord, tableaux de bord, dashboard, tdb, cockpit"],
  [
    "rgpd personal data",
    "rgpd, gdpr, donnees personnelles, personal data, vie privee, privacy, droit a l oubli",
  ],
  ["erasure", "effacement, effacer, right to be forgotten, anonymiser, anonymise, erase"],
  ["inventory", "inventaire, what data, quelles donnees, hold about"],
  ["delegated", "my, mine, myself, mon, ma, mes, about me"],
  ["settings", "parametres, parametrage, reglages, configuration, config, preferences de l entite"],
  [
    "business settings",
    "parametres metier, business settings, raison sociale, legal name, devise, currency, agrement amf, exercice fiscal, fiscal year",
  ],
  ["ltv covenant max", "ltv, loan to value, plafond, ceiling, maximum, seuil, threshold, limite"],
  ["dscr floor", "dscr, plancher, minimum, floor, couverture du service de la dette"],
  [
    "branding color logo",
    "logo, couleur, couleurs, colour, charte graphique, identite visuelle, pied de page, footer, signature email, primaire, principale, primary",
  ],
  ["frequency", "frequence, periodicite, cadence"],
  ["deadline", "delai, date limite"],
  ["reminder", "rappel, relance"],
  ["recipients", "destinataires, diffusion, receive, receives, recoit, recoivent, recevoir"],
  ["signatory", "signataire"],
  ["taxonomy", "taxonomie, nomenclature, referentiel"],
  [
    "taxonomy codes dimension",
    "types d operation, type d operation, operation types, operation type, investment type, types d investissement, statuts possibles, possible statuses",
  ],
  ["classe actif taxonomy", "classe d actif, classes d actifs, asset class, asset classes"],
  [
    "codes dimension",
    "liste de valeurs, valeurs possibles, valid codes, codes valides, allowed values, enum",
  ],
  ["field definition", "champ, champs, field, fields, definition, unite, unit, type de champ"],
  [
    "portfolio aggregates",
    "portefeuille, agregats, agregat, aggregate, totaux, global, overview, vue d ensemble, encours total, total outstanding",
  ],
  [
    "rcci compliance risk control",
    "rcci, conformite, compliance, controle interne, controles, risk control, conforme, non conforme, non conformes",
  ],
  [
    "context rights scopes key environment",
    "environnement, cle, contexte, droits, rights, permissions, scopes, scope, habilitations, cle api, api key, acces, access, allowlist",
  ],
  ["kpi snapshot", "kpi, indicateurs, ratios, metriques, metrics, chiffres cles, key figures"],
  ["covenant", "covenants, clause, ratio financier"],
  [
    "siren company",
    "siren, siret, numero d entreprise, company number, entreprise, societe, company, infos societe",
  ],
  [
    "external provider billable",
    "fournisseur, prestataire, externe, infogreffe, pappers, payant, billable, provider, appel payant, look up",
  ],
  [
    "external sync",
    "synchro, synchroniser, sync, upsert, our system, notre systeme, comptabilite, accounting system, logiciel comptable",
  ],
  [
    "external",
    "identifiant externe, id externe, reference externe, external id, erp, erp id, systeme source, source system",
  ],
  ["vintage", "millesime, vintage, annee"],
  ["target size", "taille cible, target size, objectif de collecte"],
  ["strategy", "strategie, dette, debt, equity"],
  ["harvesting", "desinvestissement, harvest"],
  // States named by the contract: a state says which record it is about
  [
    "operation status",
    "sourcing, instruction, travaux, commercialisation, livraison, cloturee, abandonnee",
  ],
  ["deal pipeline status", "analyse, due diligence, closing, abandonne"],
  ["fund status", "investing, harvesting, closed, liquidation"],
  ["entity", "entite, societe de gestion, management company"],
];

/** Every entry find_api_operations reads: the portfolio's words, then the request words. */
export const LEXICON: readonly Entry[] = [...PORTFOLIO_WORDS, ...REQUEST_WORDS];

/** The terms of an entry as written, `=` marks dropped. */
export const termsOf = ([, says]: Entry): string[] =>
  says
    .split(",")
    .map((term) => term.trim().replace(/^=/, ""))
    .filter((term) => term !== "");

/** The portfolio's groups, as search_portfolio reads them: the data's own word first. */
export const SYNONYMS: readonly (readonly string[])[] = PORTFOLIO_WORDS.map(termsOf);

const GROUPS = SYNONYMS.map((group) => group.map((term) => folded(term)));
const MAX_VARIANTS = 4;

/**
 * The query, then the same query said with the vocabulary's other words (longest terms first,
 * whole words only), at most four in all: "rapport trimestriel Rives" also as "reporting
 * trimestriel Rives".
 */
export function sayings(query: string): string[] {
  const base = folded(query).replace(/\s+/g, " ").trim();
  const variants = new Set<string>([query.trim()]);
  const swaps: Array<[string, string]> = [];
  for (const group of GROUPS)
    for (const term of [...group].sort((a, b) => b.length - a.length))
      if (new RegExp(`(^|[^a-z0-9])${asLiteral(term)}($|[^a-z0-9])`).test(base))
        for (const other of group) if (other !== term) swaps.push([term, other]);
  // All the first words together (the data's own), then one swap at a time.
  const all = canonical(base);
  if (all !== base) variants.add(all);
  for (const [term, other] of swaps) {
    if (variants.size >= MAX_VARIANTS) break;
    variants.add(replaceWord(base, term, other));
  }
  return [...variants].slice(0, MAX_VARIANTS);
}

/** Each term of the vocabulary replaced by its group's first, longest terms first, once each. */
function canonical(text: string): string {
  const pairs = GROUPS.flatMap((group) => group.slice(1).map((term) => [term, group[0]!] as const));
  pairs.sort((a, b) => b[0].length - a[0].length);
  const spans: Array<{ start: number; end: number; by: string }> = [];
  for (const [term, by] of pairs) {
    const match = new RegExp(`(^|[^a-z0-9])(${asLiteral(term)})($|[^a-z0-9])`).exec(text);
    if (!match) continue;
    const start = match.index + match[1]!.length;
    const end = start + term.length;
    if (spans.some((s) => start < s.end && end > s.start)) continue;
    spans.push({ start, end, by });
  }
  spans.sort((a, b) => b.start - a.start);
  let out = text;
  for (const { start, end, by } of spans) out = `${out.slice(0, start)}${by}${out.slice(end)}`;
  return out;
}

const asLiteral = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const replaceWord = (text: string, term: string, other: string) =>
  text.replace(new RegExp(`(^|[^a-z0-9])${asLiteral(term)}($|[^a-z0-9])`), `$1${other}$2`);
