/**
 * The retail tools as a model sees them: one {@link ChatTool} per τ² retail
 * tool (JSON Schema parameters, in τ²'s parameter order), τ²'s own tool
 * type of each (`read`, `write`, `generic`) and the read-only flags that
 * follow from it (τ² replays only `write` tools: the others change nothing).
 * τ²'s retail toolkit has no `think` tool (it is commented out upstream).
 *
 * @module
 */
import type { ChatTool, JsonSchema } from "../../models/chat_types.ts";

/** τ²'s classification of a tool (`ToolType`). */
export type RetailToolType = "read" | "write" | "generic" | "think";

const str = (description: string): JsonSchema => ({
  type: "string",
  description,
});
const strList = (description: string): JsonSchema => ({
  type: "array",
  items: { type: "string" },
  description,
});

const ORDER_ID = str(
  "Order id, starting with '#', e.g. '#W0000000'.",
);
const USER_ID = str("User id, e.g. 'sara_doe_496'.");
const PAYMENT_ID = str(
  "Payment method id of the user, e.g. 'credit_card_0000000' or 'gift_card_0000000' (see the user's or order's details).",
);
const ADDRESS: Record<string, JsonSchema> = {
  address1: str("First address line, e.g. '123 Main St'."),
  address2: str("Second address line, e.g. 'Apt 1', or an empty string."),
  city: str("City, e.g. 'San Francisco'."),
  state: str("State, e.g. 'CA'."),
  country: str("Country, e.g. 'USA'."),
  zip: str("ZIP code, e.g. '12345'."),
};

function tool(
  name: string,
  description: string,
  properties: Record<string, JsonSchema>,
): ChatTool {
  return {
    name,
    description,
    parameters: {
      type: "object",
      properties,
      required: Object.keys(properties),
      additionalProperties: false,
    },
  };
}

/** One schema per τ² retail tool, sorted by name. */
export const RETAIL_TOOL_SCHEMAS: readonly ChatTool[] = [
  tool(
    "calculate",
    "Evaluate an arithmetic expression (numbers, + - * /, parentheses, spaces) and give the result rounded to 2 decimals.",
    { expression: str("The expression, e.g. '2 + 2'.") },
  ),
  tool(
    "cancel_pending_order",
    "Cancel a pending order and refund its payments (gift cards at once, other methods in 5-7 business days). Only for status 'pending'; confirm the details with the user (yes) first. Returns the order after cancellation.",
    {
      order_id: ORDER_ID,
      reason: {
        type: "string",
        enum: ["no longer needed", "ordered by mistake"],
        description: "Why: 'no longer needed' or 'ordered by mistake'.",
      },
    },
  ),
  tool(
    "exchange_delivered_order_items",
    "Request an exchange of items of a delivered order for other variants of the same products; the price difference is paid or refunded with the given payment method. Allowed once per delivered order; confirm with the user (yes) first. Returns the order.",
    {
      order_id: ORDER_ID,
      item_ids: strList(
        "Item ids to exchange (may repeat an id that the order holds several times).",
      ),
      new_item_ids: strList(
        "Replacement item ids, position by position, each a variant of the same product.",
      ),
      payment_method_id: PAYMENT_ID,
    },
  ),
  tool(
    "find_user_id_by_email",
    "Find a user's id by email address.",
    { email: str("The email, e.g. 'something@example.com'.") },
  ),
  tool(
    "find_user_id_by_name_zip",
    "Find a user's id by first name, last name and ZIP code (use when the email is unknown or not found).",
    {
      first_name: str("First name, e.g. 'John'."),
      last_name: str("Last name, e.g. 'Doe'."),
      zip: str("ZIP code, e.g. '12345'."),
    },
  ),
  tool(
    "get_item_details",
    "Get one item (a product variant): its options, availability and price.",
    { item_id: str("Item id, e.g. '6086499569' (not a product id).") },
  ),
  tool(
    "get_order_details",
    "Get an order's status, items, address, fulfillments and payment history.",
    { order_id: ORDER_ID },
  ),
  tool(
    "get_product_details",
    "Get a product and all its variants (item ids, options, availability, prices).",
    {
      product_id: str("Product id, e.g. '6086499569' (not an item id)."),
    },
  ),
  tool(
    "get_user_details",
    "Get a user's profile: name, address, email, payment methods and order ids.",
    { user_id: USER_ID },
  ),
  tool(
    "list_all_product_types",
    "List every product type (50 in the store) as a JSON object from product name to product id, sorted by name.",
    {},
  ),
  tool(
    "modify_pending_order_address",
    "Change the shipping address of a pending order; confirm with the user (yes) first. Returns the order.",
    { order_id: ORDER_ID, ...ADDRESS },
  ),
  tool(
    "modify_pending_order_items",
    "Swap items of a pending order for other variants of the same products, paying or refunding the difference with the given payment method. Can be done only once per order; confirm with the user (yes) first. Returns the order.",
    {
      order_id: ORDER_ID,
      item_ids: strList(
        "Item ids to change (may repeat an id that the order holds several times).",
      ),
      new_item_ids: strList(
        "New item ids, position by position, each a different variant of the same product.",
      ),
      payment_method_id: PAYMENT_ID,
    },
  ),
  tool(
    "modify_pending_order_payment",
    "Pay a pending order with another of the user's payment methods (the old one is refunded); confirm with the user (yes) first. Returns the order.",
    { order_id: ORDER_ID, payment_method_id: PAYMENT_ID },
  ),
  tool(
    "modify_user_address",
    "Change a user's default address; confirm with the user (yes) first. Returns the user.",
    { user_id: USER_ID, ...ADDRESS },
  ),
  tool(
    "return_delivered_order_items",
    "Request a return of items of a delivered order; the refund goes to the original payment method or a gift card. The user gets return instructions by email. Confirm with the user (yes) first. Returns the order.",
    {
      order_id: ORDER_ID,
      item_ids: strList(
        "Item ids to return (may repeat an id that the order holds several times).",
      ),
      payment_method_id: PAYMENT_ID,
    },
  ),
  tool(
    "transfer_to_human_agents",
    "Hand the user over to a human agent with a summary of the issue. Only when the user asks for a human, or the request cannot be handled with the policy and tools.",
    { summary: str("A summary of the user's issue.") },
  ),
];

/** τ²'s `ToolType` of each retail tool. */
export const RETAIL_TOOL_TYPES: Readonly<Record<string, RetailToolType>> = {
  calculate: "generic",
  cancel_pending_order: "write",
  exchange_delivered_order_items: "write",
  find_user_id_by_email: "read",
  find_user_id_by_name_zip: "read",
  get_item_details: "read",
  get_order_details: "read",
  get_product_details: "read",
  get_user_details: "read",
  list_all_product_types: "read",
  modify_pending_order_address: "write",
  modify_pending_order_items: "write",
  modify_pending_order_payment: "write",
  modify_user_address: "write",
  return_delivered_order_items: "write",
  transfer_to_human_agents: "generic",
};

/**
 * Whether each tool leaves the database unchanged: τ²'s rule
 * (`mutates_state` is true exactly for `write` tools).
 */
export const RETAIL_TOOL_READ_ONLY: Readonly<Record<string, boolean>> = Object
  .fromEntries(
    Object.entries(RETAIL_TOOL_TYPES).map(([k, t]) => [k, t !== "write"]),
  );

/** Each tool's parameter names in τ²'s order. */
export const RETAIL_TOOL_PARAMS: Readonly<Record<string, readonly string[]>> =
  Object.fromEntries(
    RETAIL_TOOL_SCHEMAS.map((t) => [
      t.name,
      Object.keys(t.parameters.properties as Record<string, unknown>),
    ]),
  );
