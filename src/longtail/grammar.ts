/**
 * The grammar of a request to `find_api_operations`: words that carry no meaning, negations, and
 * the cues that tell a question from a change. What words mean (French and English synonyms, the
 * contract's words for them) is the portfolio's vocabulary, src/toolkit/vocabulary.ts.
 */

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
