/** How available an agent says it is: ready (remind me of mail), work (do not interrupt), offline (gone). */
export const AVAILABILITIES = ["ready", "work", "offline"] as const;
export type Availability = (typeof AVAILABILITIES)[number];
