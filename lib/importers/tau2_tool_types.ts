/**
 * What τ²-bench itself declares about its domain tools: every tool is marked
 * `@is_tool(ToolType.READ | WRITE | THINK | GENERIC)`. The table below was
 * written from `src/tau2/domains/{retail,airline,telecom}/tools.py` and
 * `src/tau2/domains/telecom/user_tools.py` of sierra-research/tau2-bench at
 * commit a2c024725189473d2d7cea3a5cfdbcc67478e41f (the commit our shared
 * retail task specs come from). τ-bench v1 declares no such types (its tools
 * carry only an OpenAI function schema), so v1 files get none.
 *
 * As MCP tool annotations: `read` and `think` only read; `write` may change
 * or delete data (τ²: "creates, updates, or deletes data"), so it is
 * destructive as MCP would assume; `generic` is decided per tool:
 * `calculate` is a pure computation (reads), `transfer_to_human_agents`
 * hands the conversation over (changes state, not destructively).
 *
 * @module
 */
import type { ExposedTool } from "../trace/tool_events.ts";

/** A τ² tool type (`ToolType` in `tau2/environment/toolkit.py`). */
export type Tau2ToolType = "read" | "write" | "think" | "generic";

const R = "read";
const W = "write";
const G = "generic";

/** The declared type of each tool, by `info.environment_info.domain_name`. */
export const TAU2_TOOL_TYPES: Readonly<
  Record<string, Readonly<Record<string, Tau2ToolType>>>
> = Object.freeze({
  retail: Object.freeze({
    calculate: G,
    cancel_pending_order: W,
    exchange_delivered_order_items: W,
    find_user_id_by_name_zip: R,
    find_user_id_by_email: R,
    get_order_details: R,
    get_product_details: R,
    get_item_details: R,
    get_user_details: R,
    list_all_product_types: R,
    modify_pending_order_address: W,
    modify_pending_order_items: W,
    modify_pending_order_payment: W,
    modify_user_address: W,
    return_delivered_order_items: W,
    transfer_to_human_agents: G,
  }),
  airline: Object.freeze({
    book_reservation: W,
    calculate: G,
    cancel_reservation: W,
    get_reservation_details: R,
    get_user_details: R,
    list_all_airports: R,
    search_direct_flight: R,
    search_onestop_flight: R,
    send_certificate: W,
    transfer_to_human_agents: G,
    update_reservation_baggages: W,
    update_reservation_flights: W,
    update_reservation_passengers: W,
    get_flight_status: R,
  }),
  telecom: Object.freeze({
    // Agent tools (tools.py).
    get_customer_by_phone: R,
    get_customer_by_id: R,
    get_customer_by_name: R,
    get_details_by_id: R,
    suspend_line: W,
    resume_line: W,
    get_bills_for_customer: R,
    send_payment_request: W,
    get_data_usage: R,
    enable_roaming: W,
    disable_roaming: W,
    transfer_to_human_agents: G,
    refuel_data: W,
    // The user's device tools (user_tools.py).
    check_status_bar: R,
    check_network_status: R,
    check_network_mode_preference: R,
    set_network_mode_preference: W,
    run_speed_test: R,
    toggle_airplane_mode: W,
    check_sim_status: R,
    reseat_sim_card: W,
    toggle_data: W,
    toggle_roaming: W,
    check_data_restriction_status: R,
    toggle_data_saver_mode: W,
    check_apn_settings: R,
    set_apn_settings: W,
    reset_apn_settings: W,
    check_wifi_status: R,
    toggle_wifi: W,
    check_wifi_calling_status: R,
    toggle_wifi_calling: W,
    check_vpn_status: R,
    connect_vpn: W,
    disconnect_vpn: W,
    check_installed_apps: R,
    check_app_status: R,
    check_app_permissions: R,
    grant_app_permission: W,
    can_send_mms: R,
    reboot_device: W,
    check_payment_request: R,
    make_payment: W,
  }),
});

/** `generic` tools decided one by one (pure computations read). */
const GENERIC_READS: ReadonlySet<string> = new Set(["calculate"]);

/**
 * The MCP-style annotations of a τ² tool, from its declared type.
 *
 * @param domain The file's `info.environment_info.domain_name`.
 * @param tool The tool name.
 * @returns The annotations, or null when the domain or tool is not in the table.
 */
export function tau2ToolAnnotations(
  domain: string,
  tool: string,
): ExposedTool["annotations"] | null {
  const types = Object.hasOwn(TAU2_TOOL_TYPES, domain)
    ? TAU2_TOOL_TYPES[domain]
    : null;
  const type = types && Object.hasOwn(types, tool) ? types[tool] : null;
  if (type === null) return null;
  if (type === "read" || type === "think") {
    return { readOnlyHint: true, destructiveHint: false };
  }
  if (type === "generic" && GENERIC_READS.has(tool)) {
    return { readOnlyHint: true, destructiveHint: false };
  }
  if (type === "generic") {
    return { readOnlyHint: false, destructiveHint: false };
  }
  return { readOnlyHint: false, destructiveHint: true };
}

/**
 * The tools a τ² domain declares, in table order.
 *
 * @param domain The domain name.
 * @returns Tool names (empty for a domain not in the table).
 */
export function tau2DomainTools(domain: string): string[] {
  return Object.hasOwn(TAU2_TOOL_TYPES, domain)
    ? Object.keys(TAU2_TOOL_TYPES[domain])
    : [];
}
