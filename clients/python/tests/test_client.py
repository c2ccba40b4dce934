"""The Python client against a real server: test/client-python.test.ts starts one and runs
``python3 -m unittest`` here with MNEMO_URL, MNEMO_API_KEY (an API key) and MNEMO_DEV_TOKEN
(a developer token, for what API keys may not do: managing keys)."""

from __future__ import annotations

import os
import unittest

from mnemo_client import Mnemo, MnemoError

URL = os.environ.get("MNEMO_URL", "")
KEY = os.environ.get("MNEMO_API_KEY", "")
DEV = os.environ.get("MNEMO_DEV_TOKEN", "")


@unittest.skipUnless(URL and KEY, "needs MNEMO_URL and MNEMO_API_KEY (run through test/client-python.test.ts)")
class ClientTest(unittest.TestCase):
    mnemo: Mnemo

    @classmethod
    def setUpClass(cls) -> None:
        cls.mnemo = Mnemo(URL, api_key=KEY)

    def test_memories(self) -> None:
        first = self.mnemo.memories.add("Ana prefers window seats on trains", timestamp="2023-05-07", metadata={"topic": "travel"})
        self.assertTrue(first["createdAt"].startswith("2023-05-07"))
        self.mnemo.memories.add("Ana's sister lives in Porto")
        self.mnemo.memories.add("Ana plays the cello on Sundays")
        listed = sorted(m["content"] for m in self.mnemo.memories.list(page_size=2))
        self.assertEqual(listed, ["Ana plays the cello on Sundays", "Ana prefers window seats on trains", "Ana's sister lives in Porto"])

        self.assertEqual(self.mnemo.memories.get(first["id"])["content"], "Ana prefers window seats on trains")
        updated = self.mnemo.memories.update(first["id"], {"content": "Ana prefers aisle seats on trains"})
        self.assertEqual(updated["content"], "Ana prefers aisle seats on trains")
        history = [(v["event"], v["source"]) for v in self.mnemo.memories.history(first["id"])]
        self.assertEqual(history, [("created", "api"), ("updated", "api")])

        hits = self.mnemo.memories.search("cello", limit=5)["results"]
        self.assertEqual([h["content"] for h in hits], ["Ana plays the cello on Sundays"])
        self.assertIn("Ana prefers aisle seats on trains", self.mnemo.context.build("aisle seats")["contextText"])

        self.mnemo.memories.delete(first["id"])
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.memories.get(first["id"])
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))

    def test_errors_carry_the_contract_code(self) -> None:
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.memories.add("")
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_request"))
        self.assertIn("content", caught.exception.message)
        with self.assertRaises(MnemoError) as refused:
            Mnemo(URL, api_key="mnemo_not_a_key").memories.get("mem_x")
        self.assertEqual((refused.exception.status, refused.exception.code), (401, "unauthorized"))

    def test_extraction(self) -> None:
        # The bun test scripted the fake model's two answers (facts, then decisions).
        dry = self.mnemo.memories.extract({"messages": [{"role": "user", "content": "I keep bees now."}]}, dry_run=True)
        self.assertEqual((dry["applied"], dry["facts"]), (False, ["Ana keeps bees"]))
        self.assertEqual(self.mnemo.memories.extraction_jobs(), [])
        self.assertEqual(list(self.mnemo.memories.proposals()), [])
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.memories.reject_proposal("prop_unknown")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_found"))

    def test_workspace_rename_and_delete(self) -> None:
        workspace = self.mnemo.workspaces.create("Attic")
        self.assertEqual(self.mnemo.workspaces.rename(workspace["id"], "Loft")["name"], "Loft")
        self.assertTrue(self.mnemo.workspaces.delete(workspace["id"])["deleted"])
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.workspaces.get(workspace["id"])
        self.assertEqual(caught.exception.status, 404)

    def test_workspaces_documents_notes_chats(self) -> None:
        workspace = self.mnemo.workspaces.create("Garden")
        self.mnemo.workspaces.create("Kitchen")
        # Other tests of this class make workspaces too, in an order unittest chooses.
        names = [w["name"] for w in self.mnemo.workspaces.list(page_size=1)]
        self.assertLessEqual({"Garden", "Kitchen"}, set(names))
        self.assertEqual(self.mnemo.workspaces.get(workspace["id"])["name"], "Garden")

        space = self.mnemo.workspace(workspace["id"])
        document = space.documents.create({"title": "Planting", "markdown": "# Planting\n\nTomatoes in May."})["document"]
        self.assertIn("Tomatoes in May.", space.documents.get(document["id"])["markdown"])
        self.assertEqual([d["title"] for d in space.documents.list()], ["Planting"])

        note = space.notes.create({"documentPayload": {"title": "Seeds"}, "blocksPayload": []})
        self.assertIn(note["id"], [n["id"] for n in space.notes.list()])

        thread = space.chats.create("Pests")
        space.chats.add_message(thread["id"], "user", "Aphids on the roses")
        space.chats.add_message(thread["id"], "assistant", "Try soapy water")
        said = [f"{m['role']}: {m['content']}" for m in space.chats.messages(thread["id"], page_size=1)]
        self.assertEqual(said, ["user: Aphids on the roses", "assistant: Try soapy water"])

    def test_files(self) -> None:
        files = self.mnemo.workspace(self.mnemo.workspaces.create("Files")["id"]).files
        info = files.upload("notes.md", "# Hello\n", "text/markdown")
        self.assertEqual((info["name"], info["type"], int(info["size"])), ("notes.md", "text/markdown", 8))
        self.assertEqual([f["key"] for f in files.list()], [info["key"]])
        self.assertEqual(files.download(info["key"]), b"# Hello\n")
        self.assertEqual(files.delete(info["key"]), {"deleted": True, "key": info["key"]})
        with self.assertRaises(MnemoError) as caught:
            files.download(info["key"])
        self.assertEqual(caught.exception.status, 404)

    def test_keys_and_usage(self) -> None:
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.keys.list()
        self.assertEqual(caught.exception.code, "forbidden")
        developer = Mnemo(URL, api_key=DEV)
        made = developer.keys.create("second", ["memory:read"])
        self.assertTrue(made["key"])
        self.assertIn("second", [k["name"] for k in developer.keys.list()])
        developer.keys.revoke(made["id"])
        self.assertNotIn("second", [k["name"] for k in developer.keys.list()])
        self.assertRegex(self.mnemo.usage.month()["month"], r"^\d{4}-\d{2}$")

    def test_every_operation_is_a_method_of_api(self) -> None:
        self.assertTrue(self.mnemo.api.get_v1_me()["ok"])


if __name__ == "__main__":
    unittest.main()
