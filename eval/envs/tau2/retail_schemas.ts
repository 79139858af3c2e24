/**
 * The retail tools as offered to a model: name, a description, a JSON
 * Schema of the arguments (parameters in τ²'s signature order) and
 * whether the tool only reads (τ²'s ToolType: READ and THINK read only,
 * WRITE not; of the GENERIC ones `calculate` reads only and
 * `transfer_to_human_agents` does not, since it ends the conversation).
 *
 * @module
 */
/** A retail tool's schema (a `ChatTool` of lib/models/chat_types.ts plus `read_only`). */
export interface RetailToolSchema {
  /** Tool name. */
  name: string;
  /** What it does. */
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: {
    type: "object";
    properties: Record<string, Record<string, unknown>>;
    required: string[];
  };
  /** Whether the tool leaves the database unchanged. */
  read_only: boolean;
}

const str = (description: string) => ({ type: "string", description });
const strs = (description: string) => ({
  type: "array",
  items: { type: "string" },
  description,
});

const ORDER_ID = str(
  "Order id starting with '#', for example '#W0000000'.",
);
const PAYMENT_ID = str(
  "Payment method id of the order's customer, for example 'gift_card_0000000' or 'credit_card_0000000'.",
);
const ADDRESS = {
  address1: str("First address line, for example '123 Main St'."),
  address2: str("Second address line, for example 'Apt 1', or ''."),
  city: str("City."),
  state: str("State, for example 'CA'."),
  country: str("Country, for example 'USA'."),
  zip: str("Zip code, for example '12345'."),
};

/** Build one schema (properties in parameter order, all required). */
function tool(
  name: string,
  description: string,
  properties: Record<string, Record<string, unknown>>,
  readOnly: boolean,
): RetailToolSchema {
  return {
    name,
    description,
    parameters: {
      type: "object",
      properties,
      required: Object.keys(properties),
    },
    read_only: readOnly,
  };
}

/** One schema per retail tool of τ²-bench, in alphabetical order. */
export const RETAIL_TOOL_SCHEMAS: readonly RetailToolSchema[] = [
  tool(
    "calculate",
    "Evaluate an arithmetic expression (numbers, + - * /, parentheses, spaces) and give the result rounded to two decimals.",
    { expression: str("The expression, for example '2 + 2'.") },
    true,
  ),
  tool(
    "cancel_pending_order",
    "Cancel an order that is still pending. Payments are refunded: at once to a gift card, otherwise within 5-7 business days. Explain the details and get an explicit yes from the user first. Returns the order after cancelling.",
    {
      order_id: ORDER_ID,
      reason: {
        type: "string",
        enum: ["no longer needed", "ordered by mistake"],
        description:
          "Why the order is cancelled: 'no longer needed' or 'ordered by mistake'.",
      },
    },
    false,
  ),
  tool(
    "exchange_delivered_order_items",
    "Ask for an exchange of items of a delivered order for other variants of the same products. A delivered order can be returned or exchanged only once. Explain the details and get an explicit yes from the user first. Returns the order after the request.",
    {
      order_id: ORDER_ID,
      item_ids: strs(
        "Item ids of the order to exchange; an id may repeat.",
      ),
      new_item_ids: strs(
        "The new item ids, position by position matching item_ids, each a variant of the same product.",
      ),
      payment_method_id: str(
        "Payment method that pays or receives the price difference.",
      ),
    },
    false,
  ),
  tool(
    "find_user_id_by_email",
    "Find a customer's user id from their email address.",
    { email: str("Email address, for example 'someone@example.com'.") },
    true,
  ),
  tool(
    "find_user_id_by_name_zip",
    "Find a customer's user id from first name, last name and zip code. Use it only when the email is not known or not found.",
    {
      first_name: str("First name, for example 'John'."),
      last_name: str("Last name, for example 'Doe'."),
      zip: str("Zip code, for example '12345'."),
    },
    true,
  ),
  tool(
    "get_item_details",
    "Get the inventory details (options, availability, price) of one item by its item id.",
    { item_id: str("Item id (not a product id), for example '6086499569'.") },
    true,
  ),
  tool(
    "get_order_details",
    "Get the status and details of an order.",
    { order_id: ORDER_ID },
    true,
  ),
  tool(
    "get_product_details",
    "Get the inventory details of a product: every item (variant) with its options, availability and price.",
    {
      product_id: str(
        "Product id (not an item id), for example '6086499569'.",
      ),
    },
    true,
  ),
  tool(
    "get_user_details",
    "Get a customer's details: name, address, email, payment methods and orders.",
    { user_id: str("User id, for example 'sara_doe_496'.") },
    true,
  ),
  tool(
    "list_all_product_types",
    "List every product type of the store (about 50) as a JSON object from product name to product id.",
    {},
    true,
  ),
  tool(
    "modify_pending_order_address",
    "Change the shipping address of a pending order. Explain the details and get an explicit yes from the user first. Returns the order after the change.",
    { order_id: ORDER_ID, ...ADDRESS },
    false,
  ),
  tool(
    "modify_pending_order_items",
    "Change items of a pending order to other variants of the same products. Can be done only once per order. Explain the details and get an explicit yes from the user first. Returns the order after the change.",
    {
      order_id: ORDER_ID,
      item_ids: strs("Item ids of the order to change; an id may repeat."),
      new_item_ids: strs(
        "The new item ids, position by position matching item_ids, each a different variant of the same product.",
      ),
      payment_method_id: str(
        "Payment method that pays or receives the price difference.",
      ),
    },
    false,
  ),
  tool(
    "modify_pending_order_payment",
    "Pay a pending order with another payment method of the customer (the old one is refunded). Explain the details and get an explicit yes from the user first. Returns the order after the change.",
    { order_id: ORDER_ID, payment_method_id: PAYMENT_ID },
    false,
  ),
  tool(
    "modify_user_address",
    "Change a customer's default address. Explain the details and get an explicit yes from the user first. Returns the customer after the change.",
    { user_id: str("User id, for example 'sara_doe_496'."), ...ADDRESS },
    false,
  ),
  tool(
    "return_delivered_order_items",
    "Ask for a return of items of a delivered order; the customer gets an email on how to send them back. The refund goes to the original payment method or a gift card. Explain the details and get an explicit yes from the user first. Returns the order after the request.",
    {
      order_id: ORDER_ID,
      item_ids: strs("Item ids of the order to return; an id may repeat."),
      payment_method_id: str(
        "Payment method for the refund: the order's original one or a gift card.",
      ),
    },
    false,
  ),
  tool(
    "transfer_to_human_agents",
    "Hand the customer over to a human agent with a summary of the issue. Only when the user asks for a human, or the issue cannot be solved with these tools under the policy.",
    { summary: str("Summary of the customer's issue.") },
    false,
  ),
];
