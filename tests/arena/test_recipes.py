"""A bot folder's recipe: bot.toml read and checked, or the detection table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.arena.recipes import Recipe, escapes, find_recipe
from referee.errors import SubmissionRefused


def folder_with(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        path = tmp_path / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def refusal(folder: Path) -> str:
    with pytest.raises(SubmissionRefused) as caught:
        find_recipe(folder)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("files", "language", "build", "run", "source"),
    [
        (["main.py"], "python", None, ("python3", "-u", "main.py"), "detected main.py"),
        (["main.js"], "javascript", None, ("node", "main.js"), "detected main.js"),
        (["Makefile", "bot.c"], "c", "make", ("./bot",), "detected Makefile"),
        (["go.mod", "main.go"], "go", "go build -o bot .", ("./bot",), "detected go.mod"),
        (["main.c"], "c", "cc -O2 -o bot main.c", ("./bot",), "detected main.c"),
    ],
)
def test_the_detection_table(
    tmp_path: Path, files: list[str], language: str, build: str | None, run: tuple[str, ...], source: str
) -> None:
    for name in files:
        (tmp_path / name).write_text("x\n")
    assert find_recipe(tmp_path) == Recipe(language, build, run, source)


def test_a_rust_bot_runs_the_binary_named_after_its_package(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, **{"Cargo.toml": '[package]\nname = "chicago-bot"\nversion = "0.1.0"\n'})
    recipe = find_recipe(folder)
    assert recipe.language == "rust"
    assert recipe.build == "cargo build --release --offline"
    assert recipe.run == ("target/release/chicago-bot",)


@pytest.mark.parametrize(
    "cargo", ['[package]\nversion = "1"\n', '[package]\nname = "../../x"\n', "name = 'x'\n", "[package\n"]
)
def test_a_cargo_toml_without_a_usable_package_name_is_refused(tmp_path: Path, cargo: str) -> None:
    message = refusal(folder_with(tmp_path, **{"Cargo.toml": cargo}))
    assert message.startswith("Cargo.toml")


def test_the_first_match_wins(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, **{"main.py": "", "Makefile": "", "main.c": "", "go.mod": "", "x.go": ""})
    assert find_recipe(folder).language == "python"
    (folder / "main.py").unlink()
    assert find_recipe(folder).source == "detected Makefile"


def test_go_needs_go_files_beside_go_mod(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, **{"go.mod": "module bot\n", "README": ""})
    assert "looked for" in refusal(folder)


def test_a_folder_of_nothing_known_says_what_was_looked_for(tmp_path: Path) -> None:
    message = refusal(folder_with(tmp_path, **{"bot.rb": "", "sub__main.py": ""}))
    assert "main.py, main.js, a Makefile, go.mod with .go files, Cargo.toml, main.c" in message
    assert "bot.toml" in message


def test_bot_toml_wins_over_detection(tmp_path: Path) -> None:
    folder = folder_with(
        tmp_path,
        **{
            "main.py": "",
            "bot.toml": 'name = "javabot"\nbuild = "javac Main.java"\nrun = "java -jar bot.jar --fast"\n',
        },
    )
    recipe = find_recipe(folder)
    assert recipe == Recipe("custom", "javac Main.java", ("java", "-jar", "bot.jar", "--fast"), "bot.toml", "javabot")


def test_run_may_be_a_list_and_build_may_be_absent(tmp_path: Path) -> None:
    folder = folder_with(tmp_path, **{"bot.toml": 'run = ["python3", "my bot.py"]\n'})
    recipe = find_recipe(folder)
    assert recipe.run == ("python3", "my bot.py") and recipe.build is None and recipe.name is None


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('run = "./bot"\ncompile = "make"\n', "unknown key 'compile'"),
        ('build = "make"\n', "`run` is missing"),
        ('run = "/usr/local/mybot"\n', "'/usr/local/mybot', outside the bot's folder"),
        ('run = "python3 ../other/bot.py"\n', "'../other/bot.py', outside"),
        ('run = ["java", "-Dx=../../etc", "Main"]\n', "outside"),
        ('run = "./bot \'unclosed"\n', "cannot be split into words"),
        ('run = ""\n', "is empty"),
        ("run = 3\n", "must be a command"),
        ('run = ["./bot", 3]\n', "must be a command"),
        ('run = "./bot"\nbuild = ["make"]\n', "`build` must be one shell command"),
        ('run = "./bot"\nname = 7\n', "`name` must be a string"),
        ('run = "./bot"\nname = "a\\u0007b"\n', "no control characters"),
        ("run = \n", "not valid TOML"),
    ],
)
def test_a_bad_bot_toml_is_refused_naming_the_key(tmp_path: Path, toml: str, says: str) -> None:
    message = refusal(folder_with(tmp_path, **{"bot.toml": toml}))
    assert message.startswith("bot.toml")
    assert says in message


def test_escapes() -> None:
    assert escapes("/bin/x") and escapes("..") and escapes("a/../b") and escapes("--path=/etc")
    assert not escapes("./bot") and not escapes("target/release/x") and not escapes("a..b") and not escapes("-O2")


def test_a_recipe_goes_through_json_and_back() -> None:
    recipe = Recipe("custom", "make", ("./bot", "--level", "3"), "bot.toml", "mine")
    again = Recipe.from_dict(json.loads(json.dumps(recipe.as_dict())))
    assert again == recipe
    assert Recipe.from_dict(Recipe("python", None, ("python3", "main.py"), "detected main.py").as_dict()).build is None
