/**
 * The vocabulary of `find_api_operations`: how portfolio managers say things, in French and
 * English, mapped to the words the contract uses. Domain words, not test answers: an entry belongs
 * here when a user could say it about any operation, entity or record.
 *
 * Each entry is [the contract's words, what users say]. What users say is a comma-separated list:
 * a single word matches any inflection (it is stemmed like the query), several words match that
 * expression, and `=word` matches that exact form only (for forms whose stem means something
 * else: "reporte" postpones, "report" reports).
 */
export const LEXICON: ReadonlyArray<readonly [string, string]> = [
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
  [
    "operation",
    "operation, projet, programme, financement, loan, pret, investissement, actif, asset",
  ],
  ["fund", "fonds, fond, vehicule d investissement, fcpi, fpci, opci"],
  ["spv", "sci, sas, societe de projet, holding, special purpose vehicle, vehicule"],
  [
    "operator",
    "operateur, promoteur, developer, sponsor, emprunteur, borrower, contrepartie, counterparty, marchand de biens",
  ],
  [
    "risk third party",
    "risque, litige, litigation, dispute, contentieux, tiers, tierce, third party",
  ],
  ["note", "commentaire, remarque, compte rendu, memo, cr"],
  ["follow up note", "note de suivi, notes de suivi, suivi"],
  [
    "document",
    "valuation report, rapport d expertise, appraisal, expertise, pv d ag, proces verbal d ag, minutes, facture, invoice, piece, fichier, file, pdf, pv, proces verbal, acte, contrat, bail, lease, scan, justificatif, term sheet, docx",
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
    "calendrier, agenda, planning, evenement, rdv, rendez vous, meeting, reunion, visite, visit, ag, assemblee generale, comite",
  ],
  ["proposed", "propose, proposee, proposees, proposition, suggere, suggested, suggestion"],
  [
    "date",
    "jour, day, demain, tomorrow, semaine, week, mois, month, janvier, fevrier, mars, avril, mai, juin, juillet, aout, septembre, octobre, novembre, decembre, january, february, march, april, june, july, august, september, october, november, december, quand, when",
  ],
  ["manual", "manuel, manuellement, by hand, a la main"],
  [
    "repayment schedule",
    "echeancier, tableau d amortissement, amortissement, amortization, plan de remboursement, echeances, instalments, installments",
  ],
  ["due", "echeance, echu, echue, exigible, due date"],
  [
    "late unpaid due",
    "en retard, retard, retards, impaye, impayes, overdue, arriere, arrieres, past due",
  ],
  [
    "repayment",
    "remboursement, rembourser, paiement, payment, versement, encaissement, virement, repaid, paid",
  ],
  ["pending", "en attente, a confirmer, non confirme"],
  ["report reporting", "rapport, reporting"],
  // A quarterly or annual report is a document the operator delivers (category reporting).
  ["reporting document", "trimestriel, quarterly, annuel, annual, mensuel, monthly"],
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
  ["deadline", "delai, date limite, deadline"],
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

/** Words that carry no meaning for the search (French and English), once the lexicon has run. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "le la les un une des du de au aux et ou en dans sur sous pour par avec sans ce cet cette ces " +
    "se sa son ses leur leurs nos notre vos votre il elle ils elles on nous vous je tu me moi " +
    "te toi qui que qu quoi est sont ete etre ai as avons avez ont fait faire plus pas ne ni " +
    "cela ceci ca lui y " +
    "the an of to for on in at by with from and or is are was were be been it its this that " +
    "these those there here do does did you we they he she us our your their please can could " +
    "would should will shall just any some into as so if then than has have had what which who " +
    "whom how why where when show display give tell get see want need quel quelle quels " +
    "quelles combien ou quand comment montre montrer affiche afficher donne donner voir " +
    "consulter a i m s d l c j n t y mon ma mes my about"
  ).split(" "),
);

/** Words after which, within a clause, nothing is affirmed ("never billable", "sans frais"). */
export const NEGATIONS: ReadonlySet<string> = new Set(
  "never not no without nothing none cannot cant dont doesnt sans jamais ne aucun aucune".split(
    " ",
  ),
);

/** Words of a question, or of a request to see something: a mild nudge towards reads. */
export const READ_CUES: ReadonlySet<string> = new Set(
  (
    "what whats which who how where when why show list display see view give tell get does " +
    "did quel quelle quels quelles qui combien ou quand comment montre montrer " +
    "affiche afficher liste lister donne donner voir consulter consulte existe existent"
  ).split(" "),
);

/** Words that make a request polite: "can you acknowledge it?" is not a question. */
export const POLITE_CUES: ReadonlySet<string> = new Set(
  "can could would will please peux pouvez pourrais pourriez merci veux voudrais".split(" "),
);

/** The contract's verbs of change: a query that comes to one of them is nudged towards writes. */
export const WRITE_VERBS: readonly string[] = (
  "create add update change delete remove move accept reject acknowledge resolve postpone " +
  "upload mark record invite suspend activate send attach detach replace cancel run start " +
  "enable disable reorder import confirm rename set share save erase erasure reset forget " +
  "toggle sync"
).split(" ");
