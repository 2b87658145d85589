// The conversation views of the command line: conversations, messages, artifacts, prune.
// They read the store through the library's ConversationStore (SPEC §7).

import { Option } from "commander";
import { nodeStorage } from "../adapters/node.js";
import { CliError, count, fields, plural, humanBytes, out, print, printJson, relativeTime, shorten, table } from "./ui.js";

const ROLES = ["user", "assistant", "tool", "system"];

async function openStore(dir) {
  const { ConversationStore } = await import("../index.node.js");
  if (typeof ConversationStore?.open !== "function") {
    throw new CliError("this build of toolctx has no ConversationStore", { hint: "conversation views need toolctx with conversations (SPEC §7)" });
  }
  return ConversationStore.open({ contextDir: dir, storage: nodeStorage() });
}

/** `--conversation ID`, else the most recently updated conversation. */
async function pickConversation(store, dir, id) {
  if (id !== undefined) {
    try {
      return await store.getConversation(id);
    } catch (e) {
      if (e?.code === "NOT_FOUND") {
        throw new CliError(`no conversation ${id} in ${dir}`, { hint: "run 'toolctx conversations' to list them", cause: e });
      }
      throw e;
    }
  }
  const all = await store.listConversations();
  if (!all.length) throw new CliError(`no conversations in ${dir}`);
  all.sort((a, b) => (Date.parse(b.updatedAt) || 0) - (Date.parse(a.updatedAt) || 0));
  return store.getConversation(all[0].id);
}

const length = (v) => (Array.isArray(v) ? v.length : Number(v ?? 0));

export function registerConversationCommands(command, withGlobals, { existingStore, integer }) {
  const conversationOption = ["--conversation <id>", "the conversation (default: the most recently updated)"];

  command("conversations", "list the conversations: title, messages, artifacts, last update").action(
    withGlobals(async (opts) => {
      const dir = existingStore(opts);
      const store = await openStore(dir);
      const all = await store.listConversations();
      all.sort((a, b) => (Date.parse(b.updatedAt) || 0) - (Date.parse(a.updatedAt) || 0));
      if (opts.json) return printJson({ dir, conversations: all });
      if (!all.length) return print(out.dim("no conversations"));
      print(
        table(
          [{ title: "CONVERSATION" }, { title: "TITLE" }, { title: "MESSAGES", align: "right" }, { title: "ARTIFACTS", align: "right" }, { title: "UPDATED" }],
          all.map((c) => [c.id, shorten(c.title ?? "", 40), count(c.messageCount ?? 0), count(c.artifactCount ?? 0), out.dim(relativeTime(c.updatedAt))]),
        ),
      );
    }),
  );

  command("messages", "list a conversation's messages, oldest first")
    .option(...conversationOption)
    .addOption(new Option("--role <role>", "only this role").choices(ROLES))
    .action(
      withGlobals(async (opts) => {
        const dir = existingStore(opts);
        const store = await openStore(dir);
        const conversation = await pickConversation(store, dir, opts.conversation);
        const messages = await store.getMessages(conversation.id, opts.role === undefined ? {} : { role: opts.role });
        if (opts.json) return printJson({ dir, conversation: conversation.id, messages });
        const header = `${out.bold(conversation.id)}${conversation.title ? ` ${JSON.stringify(conversation.title)}` : ""}`;
        if (!messages.length) return print(header, out.dim(opts.role ? `no ${opts.role} messages` : "no messages"));
        const label = (role) => ({ user: out.green, assistant: out.cyan, tool: out.yellow }[role] ?? out.dim)(`[${role}]`);
        print(
          header,
          "",
          ...messages.map((m) => {
            const calls = m.toolCalls?.length ? out.dim(` (${m.toolCalls.length} tool call${m.toolCalls.length === 1 ? "" : "s"})`) : "";
            const failed = m.success === false ? out.red(" failed") : "";
            return `${out.dim(relativeTime(m.timestamp).padEnd(16))} ${label(m.role)} ${shorten(m.content, 100)}${calls}${failed}`;
          }),
          "",
          out.dim(plural(messages.length, "message")),
        );
      }),
    );

  command("artifacts", "list a conversation's artifacts (large data referenced as artifact://ID)")
    .option(...conversationOption)
    .action(
      withGlobals(async (opts) => {
        const dir = existingStore(opts);
        const store = await openStore(dir);
        const conversation = await pickConversation(store, dir, opts.conversation);
        const artifacts = await store.listArtifacts(conversation.id);
        if (opts.json) return printJson({ dir, conversation: conversation.id, artifacts });
        if (!artifacts.length) return print(out.dim(`no artifacts in ${conversation.id}`));
        print(
          table(
            [{ title: "ARTIFACT" }, { title: "TYPE" }, { title: "NAME" }, { title: "MIME TYPE" }, { title: "SIZE", align: "right" }, { title: "CREATED" }],
            artifacts.map((a) => [`artifact://${a.id}`, out.cyan(a.type ?? ""), shorten(a.name ?? "", 40), a.mimeType ?? "", humanBytes(a.size), out.dim(relativeTime(a.createdAt))]),
          ),
          out.dim(`${plural(artifacts.length, "artifact")}, ${humanBytes(artifacts.reduce((n, a) => n + (a.size ?? 0), 0))}`),
        );
      }),
    );

  command("prune", "drop low-relevance messages to fit a token budget (a dry run unless --apply)")
    .option(...conversationOption)
    .requiredOption("--max-tokens <n>", "the token budget", integer("a token count", { min: 1 }))
    .option("--task <text>", "the task: messages matching its keywords score higher")
    .option("--keep-recent <n>", "always keep this many recent messages", integer("a count"))
    .option("--apply", "rewrite the conversation (default: only report what would go)")
    .action(
      withGlobals(async (opts) => {
        const dir = existingStore(opts);
        const store = await openStore(dir);
        const conversation = await pickConversation(store, dir, opts.conversation);
        const options = { maxTokens: opts.maxTokens, apply: Boolean(opts.apply) };
        if (opts.task !== undefined) options.task = opts.task;
        if (opts.keepRecent !== undefined) options.keepRecent = opts.keepRecent;
        const report = await store.prune(conversation.id, options);
        const kept = length(report.kept);
        const dropped = length(report.dropped);
        const droppedIds = Array.isArray(report.dropped) ? report.dropped.map((m) => m.id) : [];
        if (opts.json) {
          return printJson({
            dir, conversation: conversation.id, applied: Boolean(opts.apply), kept, dropped, droppedIds,
            tokensBefore: report.tokensBefore, tokensAfter: report.tokensAfter,
          });
        }
        const lines = [
          fields([
            ["Conversation", conversation.id],
            ["Messages", `${count(kept)} kept, ${count(dropped)} ${opts.apply ? "dropped" : "would be dropped"}`],
            ["Tokens", `${count(report.tokensBefore ?? 0)} → ${count(report.tokensAfter ?? 0)} (budget ${count(opts.maxTokens)}; the ${count(opts.keepRecent ?? 10)} most recent messages always stay)`],
          ]),
        ];
        if (Array.isArray(report.dropped) && report.dropped.length) {
          lines.push("", out.bold(opts.apply ? "Dropped:" : "Would drop:"));
          for (const m of report.dropped.slice(0, 10)) lines.push(`  ${out.dim(relativeTime(m.timestamp).padEnd(16))} [${m.role}] ${shorten(m.content, 80)}`);
          if (report.dropped.length > 10) lines.push(out.dim(`  … +${count(report.dropped.length - 10)} more`));
        }
        if (!opts.apply && dropped) lines.push("", out.dim("Dry run: pass --apply to drop them."));
        print(...lines);
      }),
    );
}

