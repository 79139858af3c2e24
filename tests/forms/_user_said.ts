/**
 * A τ² trajectory file in which each simulation is one user message and
 * one read the agent makes from it (for tests of user-word sources).
 */
export function userSaid(
  domain: string,
  turns: { user: string; tool: string; args: Record<string, unknown> }[],
): string {
  return JSON.stringify({
    info: { environment_info: { domain_name: domain } },
    tasks: [],
    simulations: turns.map((t, k) => ({
      id: `s${k}`,
      task_id: String(k),
      trial: 0,
      reward_info: { reward: 1 },
      messages: [
        { role: "user", content: t.user },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: `a${k}`, name: t.tool, arguments: t.args }],
        },
        { role: "tool", id: `a${k}`, content: JSON.stringify({ ok: true }) },
        { role: "assistant", content: "Done." },
      ],
    })),
  });
}
