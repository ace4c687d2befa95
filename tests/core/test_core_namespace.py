"""`import gradcli as gc`: dir(gc) lists the library's names, not the modules its lazy import
machinery uses (tryout6 section 5)."""
import gradcli as gc


def test_the_namespace_does_not_leak_the_import_machinery():
    names = set(dir(gc))
    assert not names & {"sys", "importlib", "annotations"}
    assert {"variable", "gradients", "custom_gradient", "function"} <= names
