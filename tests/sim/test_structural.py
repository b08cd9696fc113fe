"""Custom resources pruned, defaulted and validated by their CRD schema as a 1.34 server does.

Expected texts come from the real server's code (Kubernetes 1.34 staging repositories):
apiextensions-apiserver:pkg/apiserver/schema/pruning/algorithm.go (pruned paths),
pkg/apiserver/schema/defaulting/{algorithm,prunenulls}.go, pkg/apiserver/validation/validation.go
(``kubeOpenAPIResultToFieldErrors``) with kube-openapi:pkg/validation/errors/schema.go (keyword
messages) and pkg/validation/validate/*.go (check order, ratcheting), pkg/apiserver/schema/listtype/
validation.go, pkg/apiserver/schema/objectmeta/validation.go, pkg/apiserver/schema/cel/validation.go
(rule errors), pkg/registry/customresource/strategy.go (``hasBlockingErr``) and
pkg/apis/apiextensions/validation/validation.go plus pkg/apiserver/schema/validation.go (CRD
refusals); summarised in the team's research notes, sections 2.3, 3 and 4.

Covers: each schema keyword's cause reason, field and body; list-type duplicates; embedded
resources; pruned paths (nested, arrays, maps, preserve-unknown subtrees, embedded metadata, root
metadata); defaulting (array items, nullable, additionalProperties); CEL rules (message,
messageExpression, reason, fieldPath, transition rules, optionalOldSelf, the ``<nil>`` skip cause,
runtime errors); ratcheting of schema and rule errors; CRD refusals with their paths; rows built from
a CRD carry the compiled schema. Properties: pruning is idempotent, validation never raises on any
JSON value, objects defaulted by valid defaults validate, Go float formatting round-trips, the CRD
checks never raise on any CRD-shaped JSON.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.sim.apiserver import apierrors, crdcheck, resources
from shared.sim.apiserver.apierrors import FieldError
from shared.sim.apiserver.openapivalidate import go_float
from shared.sim.apiserver.structural import SchemaError, StructuralSchema, crd_errors

ROOT = "spec.validation.openAPIV3Schema"


def compiled(spec: dict[str, Any], **root: Any) -> StructuralSchema:
    return StructuralSchema.compile({"type": "object", "properties": {"spec": spec}, **root}, path=ROOT)


def field_schema(node: dict[str, Any]) -> StructuralSchema:
    return compiled({"type": "object", "properties": {"x": node}})


def causes(errors: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.type, e.field, e.body) for e in errors]


def check(node: dict[str, Any], value: Any) -> list[tuple[str, str, str]]:
    schema = field_schema(node)
    return causes(schema.validate({"apiVersion": "e.com/v1", "kind": "W", "spec": {"x": value}}, old=None))


# --- schema keywords ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "value", "expected"),
    [
        (
            {"type": "integer"},
            "abc",
            ("FieldValueTypeInvalid", 'Invalid value: "string": spec.x in body must be of type integer: "string"'),
        ),
        (
            {"type": "string"},
            None,
            ("FieldValueTypeInvalid", 'Invalid value: "null": spec.x in body must be of type string: "null"'),
        ),
        (
            {"x-kubernetes-int-or-string": True},
            1.5,
            (
                "FieldValueTypeInvalid",
                'Invalid value: "number": spec.x in body must be of type integer,string: "number"',
            ),
        ),
        (
            {"type": "string", "enum": ["a", "b"]},
            "c",
            ("FieldValueNotSupported", 'Unsupported value: "c": supported values: "a", "b"'),
        ),
        (
            {"type": "integer", "enum": [1, 2]},
            3,
            ("FieldValueNotSupported", 'Unsupported value: 3: supported values: "1", "2"'),
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "ABC",
            ("FieldValueInvalid", "Invalid value: \"ABC\": spec.x in body should match '^[a-z]+$'"),
        ),
        (
            {"type": "integer", "minimum": 1},
            0,
            ("FieldValueInvalid", "Invalid value: 0: spec.x in body should be greater than or equal to 1"),
        ),
        (
            {"type": "integer", "maximum": 10},
            11,
            ("FieldValueInvalid", "Invalid value: 11: spec.x in body should be less than or equal to 10"),
        ),
        (
            {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
            1,
            ("FieldValueInvalid", "Invalid value: 1: spec.x in body should be greater than 1"),
        ),
        (
            {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
            10,
            ("FieldValueInvalid", "Invalid value: 10: spec.x in body should be less than 10"),
        ),
        (
            {"type": "number", "minimum": 0.5},
            0.25,
            ("FieldValueInvalid", "Invalid value: 0.25: spec.x in body should be greater than or equal to 0.5"),
        ),
        (
            {"type": "string", "minLength": 3},
            "ab",
            ("FieldValueInvalid", 'Invalid value: "ab": spec.x in body should be at least 3 chars long'),
        ),
        ({"type": "string", "maxLength": 5}, "abcdef", ("FieldValueTooLong", "Too long: may not be more than 5 bytes")),
        (
            {"type": "array", "minItems": 1, "items": {"type": "string"}},
            [],
            ("FieldValueInvalid", "Invalid value: 0: spec.x in body should have at least 1 items"),
        ),
        (
            {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            ["a", "b", "c"],
            ("FieldValueTooMany", "Too many: 3: must have at most 2 items"),
        ),
        (
            {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
            {},
            ("FieldValueInvalid", "Invalid value: 0: spec.x in body should have at least 1 properties"),
        ),
        (
            {"type": "object", "maxProperties": 3, "additionalProperties": {"type": "string"}},
            {"a": "1", "b": "2", "c": "3", "d": "4"},
            ("FieldValueTooMany", "Too many: 4: must have at most 3 items"),
        ),
        (
            {"type": "integer", "multipleOf": 5},
            7,
            ("FieldValueInvalid", "Invalid value: 7: spec.x in body should be a multiple of 5"),
        ),
        (
            {"type": "string", "format": "uuid"},
            "nope",
            ("FieldValueTypeInvalid", 'Invalid value: "nope": spec.x in body must be of type uuid: "nope"'),
        ),
        (
            {"type": "string", "format": "date-time"},
            "yesterday",
            (
                "FieldValueTypeInvalid",
                'Invalid value: "yesterday": spec.x in body must be of type date-time: "yesterday"',
            ),
        ),
    ],
)
def test_each_keyword_reports_the_real_reason_and_text(
    node: dict[str, Any], value: Any, expected: tuple[str, str]
) -> None:
    assert check(node, value) == [(expected[0], "spec.x", expected[1])]


@pytest.mark.parametrize(
    ("node", "value"),
    [
        ({"type": "string", "nullable": True}, None),
        ({"type": "number"}, 3),  # an integer is a number
        ({"type": "integer"}, 3.0),  # an integral float is an integer
        ({"type": "string", "format": "int32"}, "x"),  # formats the server does not know are dropped
        ({"type": "string", "format": "k8s-short-name"}, "my-name"),
        ({"x-kubernetes-int-or-string": True}, "50%"),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, {"anything": [1, {"b": None}]}),
    ],
)
def test_values_the_schema_allows_pass(node: dict[str, Any], value: Any) -> None:
    assert check(node, value) == []


def test_required_reports_the_missing_field_without_detail() -> None:
    schema = compiled({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}})
    assert causes(schema.validate({"spec": {}}, old=None)) == [("FieldValueRequired", "spec.name", "Required value")]


def test_a_nullable_enum_refuses_null_like_the_real_validator() -> None:
    # kube-openapi's enum check runs on null data too and never matches it.
    assert check({"type": "string", "enum": ["a"], "nullable": True}, None) == [
        ("FieldValueNotSupported", "spec.x", 'Unsupported value: null: supported values: "a"')
    ]


def test_a_string_reports_only_its_first_length_or_pattern_failure() -> None:
    node = {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"}
    assert check(node, "ABCDEF") == [("FieldValueTooLong", "spec.x", "Too long: may not be more than 3 bytes")]


def test_array_items_are_checked_before_the_array_bounds() -> None:
    node = {"type": "array", "maxItems": 1, "items": {"type": "integer"}}
    assert check(node, ["a", 2]) == [
        (
            "FieldValueTypeInvalid",
            "spec.x[0]",
            'Invalid value: "string": spec.x[0] in body must be of type integer: "string"',
        ),
        ("FieldValueTooMany", "spec.x", "Too many: 2: must have at most 1 items"),
    ]


def test_large_float_bounds_print_as_go_does() -> None:
    node = {"type": "number", "maximum": 1000000}
    assert check(node, 2e6) == [
        ("FieldValueInvalid", "spec.x", "Invalid value: 2e+06: spec.x in body should be less than or equal to 1e+06")
    ]


def test_the_422_reads_like_the_real_one() -> None:
    schema = compiled({"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 1}}})
    errors = schema.validate({"spec": {"replicas": 0}}, old=None)
    status = apierrors.invalid("Widget", "w1", errors, group="example.com").status()
    assert status["message"] == (
        'Widget.example.com "w1" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be greater'
        " than or equal to 1"
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            "field": "spec.replicas",
        }
    ]


# --- list types and embedded resources --------------------------------------------------------------------


def test_a_set_reports_the_first_repeat_of_each_value() -> None:
    node = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    assert check(node, ["a", "b", "a", "a", "b"]) == [
        ("FieldValueDuplicate", "spec.x[2]", 'Duplicate value: "a"'),
        ("FieldValueDuplicate", "spec.x[4]", 'Duplicate value: "b"'),
    ]


def _map_list(*keys: str) -> dict[str, Any]:
    return {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": list(keys),
        "items": {
            "type": "object",
            "required": list(keys),
            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}, "x": {"type": "string"}},
        },
    }


def test_a_map_list_reports_the_repeated_key_fields() -> None:
    items = [{"name": "a", "port": 80, "x": "1"}, {"name": "a", "port": 80, "x": "2"}]
    assert check(_map_list("name"), items) == [("FieldValueDuplicate", "spec.x[1]", 'Duplicate value: {"name":"a"}')]
    assert check(_map_list("name", "port"), items) == [
        ("FieldValueDuplicate", "spec.x[1]", 'Duplicate value: {"name":"a","port":80}')
    ]


def test_a_map_list_item_must_be_an_object() -> None:
    found = check(_map_list("name"), [{"name": "a"}, "b"])
    assert (
        "FieldValueInvalid",
        "spec.x[1]",
        'Invalid value: "b": must be an object for an array of list-type map',
    ) in found


def test_an_embedded_resource_needs_api_version_and_kind() -> None:
    node = {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}
    assert check(node, {"metadata": {"name": "a/b"}}) == [
        ("FieldValueRequired", "spec.x.apiVersion", "Required value"),
        ("FieldValueRequired", "spec.x.kind", "Required value"),
        ("FieldValueInvalid", "spec.x.metadata.name", "Invalid value: \"a/b\": may not contain '/'"),
    ]


# --- pruning ------------------------------------------------------------------------------------------------

PRUNING = compiled(
    {
        "type": "object",
        "properties": {
            "known": {"type": "object", "properties": {"a": {"type": "string"}}},
            "list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}},
            },
            "free": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"typed": {"type": "object", "properties": {"a": {"type": "string"}}}},
            },
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "gone": {"type": "string"},
            "kept": {"type": "string", "nullable": True},
            "withDefault": {"type": "string", "default": "d"},
        },
    }
)


def test_prune_drops_unknown_fields_everywhere_and_reports_them_as_the_server_does() -> None:
    obj = {
        "apiVersion": "e.com/v1",
        "kind": "W",
        "metadata": {"name": "w", "zeta": 1, "alpha": 2, "ownerReferences": [{"uid": "u", "extra": 1}]},
        "spec": {
            "known": {"a": "x", "b": 1},
            "list": [{"name": "n", "z": 1}, {"y": 2}],
            "labels": {"k": {"v": "1", "w": 2}},
            "free": {"anything": {"deep": 1}, "typed": {"a": "s", "b": 1}},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "junk": 1}, "spec": {"x": 1}},
            "extra": 1,
        },
        "status": {"phase": "x"},
    }
    assert PRUNING.prune(obj) == [
        "metadata.zeta",
        "metadata.alpha",
        "metadata.ownerReferences[0].extra",
        "spec.extra",
        "spec.free.typed.b",
        "spec.known.b",
        "spec.labels.k.w",
        "spec.list[0].z",
        "spec.list[1].y",
        "status",
        "spec.template.metadata.junk",
    ]
    assert obj == {
        "apiVersion": "e.com/v1",
        "kind": "W",
        "metadata": {"name": "w", "ownerReferences": [{"uid": "u"}]},
        "spec": {
            "known": {"a": "x"},
            "list": [{"name": "n"}, {}],
            "labels": {"k": {"v": "1"}},
            "free": {"anything": {"deep": 1}, "typed": {"a": "s"}},
            "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}},
        },
    }


def test_prune_drops_nulls_the_schema_neither_allows_nor_defaults_without_reporting_them() -> None:
    obj = {"spec": {"gone": None, "kept": None, "withDefault": None}}
    assert PRUNING.prune(obj) == []
    assert obj == {"spec": {"kept": None, "withDefault": None}}
    PRUNING.default(obj)
    assert obj == {"spec": {"kept": None, "withDefault": "d"}}


def test_a_root_that_preserves_unknown_fields_keeps_everything() -> None:
    schema = StructuralSchema.compile({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, path=ROOT)
    obj = {"apiVersion": "v", "kind": "K", "metadata": {"name": "n"}, "spec": {"a": [1, {"b": 2}]}, "other": 1}
    expected = copy.deepcopy(obj)
    assert schema.prune(obj) == []
    assert obj == expected


# --- defaulting ----------------------------------------------------------------------------------------------

DEFAULTS = compiled(
    {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "default": 1},
            "ports": {
                "type": "array",
                "items": {"type": "object", "properties": {"protocol": {"type": "string", "default": "TCP"}}},
            },
            "names": {"type": "array", "items": {"type": "string", "default": "unnamed"}},
            "opt": {"type": "object", "nullable": True, "properties": {"mode": {"type": "string", "default": "m"}}},
            "limits": {"type": "object", "additionalProperties": {"type": "string", "default": "0"}},
            "nested": {"type": "object", "properties": {"inner": {"type": "string", "default": "i"}}},
        },
    }
)


def test_defaults_fill_missing_fields_including_inside_array_items_and_maps() -> None:
    obj: dict[str, Any] = {
        "spec": {"ports": [{}, {"protocol": "UDP"}], "names": ["a", None], "limits": {"cpu": None}, "nested": {}}
    }
    DEFAULTS.prune(obj)
    DEFAULTS.default(obj)
    assert obj["spec"] == {
        "replicas": 1,
        "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}],
        "names": ["a", "unnamed"],
        "limits": {"cpu": "0"},
        "nested": {"inner": "i"},
    }


def test_a_nullable_null_stays_null_and_an_absent_parent_gets_no_child_defaults() -> None:
    obj: dict[str, Any] = {"spec": {"opt": None}}
    DEFAULTS.default(obj)
    assert obj["spec"]["opt"] is None
    assert "nested" not in obj["spec"]
    obj = {"spec": {"opt": {}}}
    DEFAULTS.default(obj)
    assert obj["spec"]["opt"] == {"mode": "m"}


# --- CEL rules -----------------------------------------------------------------------------------------------


def rules_schema(*rules: dict[str, Any], root_rules: tuple[dict[str, Any], ...] = ()) -> StructuralSchema:
    spec: dict[str, Any] = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "minimum": 0},
            "name": {"type": "string"},
            "ratio": {"type": "number"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "x-kubernetes-validations": list(rules),
    }
    extra = {"x-kubernetes-validations": list(root_rules)} if root_rules else {}
    return compiled(spec, **extra)


def cr(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "e.com/v1", "kind": "W", "metadata": {"name": "w"}, "spec": spec}


def test_a_failing_rule_reports_its_message_against_the_schema_type() -> None:
    schema = rules_schema({"rule": "self.replicas <= 10", "message": "replicas must not exceed 10"})
    assert causes(schema.validate(cr(replicas=11), old=None)) == [
        ("FieldValueInvalid", "spec", 'Invalid value: "object": replicas must not exceed 10')
    ]
    assert schema.validate(cr(replicas=3), old=None) == []


def test_a_rule_without_message_reports_the_rule_and_root_rules_report_at_nil() -> None:
    schema = rules_schema({"rule": "self.replicas <= 10"}, root_rules=({"rule": "self.metadata.name != 'w'"},))
    assert causes(schema.validate(cr(replicas=11), old=None)) == [
        ("FieldValueInvalid", "<nil>", "Invalid value: \"object\": failed rule: self.metadata.name != 'w'"),
        ("FieldValueInvalid", "spec", 'Invalid value: "object": failed rule: self.replicas <= 10'),
    ]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"reason": "FieldValueForbidden"}, ("FieldValueForbidden", "spec", "Forbidden: too many")),
        ({"reason": "FieldValueRequired"}, ("FieldValueRequired", "spec", "Required value: too many")),
        ({"reason": "FieldValueDuplicate"}, ("FieldValueDuplicate", "spec", 'Duplicate value: "object"')),
        ({"fieldPath": ".replicas"}, ("FieldValueInvalid", "spec.replicas", 'Invalid value: "object": too many')),
        (
            {"messageExpression": "'replicas is ' + string(self.replicas)"},
            ("FieldValueInvalid", "spec", 'Invalid value: "object": replicas is 11'),
        ),
        # A messageExpression that fails to evaluate falls back to the static message.
        (
            {"messageExpression": "self.labels['gone']"},
            ("FieldValueInvalid", "spec", 'Invalid value: "object": too many'),
        ),
    ],
)
def test_reason_field_path_and_message_expression(extra: dict[str, Any], expected: tuple[str, str, str]) -> None:
    schema = rules_schema({"rule": "self.replicas <= 10", "message": "too many", **extra})
    assert causes(schema.validate(cr(replicas=11, labels={}), old=None)) == [expected]


def test_a_transition_rule_runs_only_on_update_and_optional_old_self_also_on_create() -> None:
    schema = rules_schema({"rule": "self.name == oldSelf.name", "message": "name is immutable"})
    assert schema.validate(cr(name="b"), old=None) == []
    assert causes(schema.validate(cr(name="b"), old=cr(name="a"))) == [
        ("FieldValueInvalid", "spec", 'Invalid value: "object": name is immutable')
    ]
    optional = rules_schema(
        {"rule": "!oldSelf.hasValue() ? self.name == 'first' : true", "optionalOldSelf": True, "message": "m"}
    )
    assert causes(optional.validate(cr(name="other"), old=None)) == [
        ("FieldValueInvalid", "spec", 'Invalid value: "object": m')
    ]
    assert optional.validate(cr(name="other"), old=cr(name="x")) == []


def test_blocking_errors_skip_the_rules_with_the_nil_cause() -> None:
    schema = rules_schema({"rule": "self.replicas <= 10"})
    found = causes(schema.validate(cr(replicas="many"), old=None))
    assert found == [
        (
            "FieldValueTypeInvalid",
            "spec.replicas",
            'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        ),
        (
            "FieldValueInvalid",
            "<nil>",
            "Invalid value: null: some validation rules were not checked because the object was invalid; correct the"
            " existing errors to complete validation",
        ),
    ]
    assert apierrors.invalid("W", "w", schema.validate(cr(replicas="many"), old=None)).message.endswith(
        "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct"
        " the existing errors to complete validation]"
    )


def test_an_invalid_value_error_does_not_block_the_rules_but_a_prior_required_does() -> None:
    schema = rules_schema({"rule": "self.replicas <= 10"})
    found = causes(schema.validate(cr(replicas=-1, name="x"), old=None))
    assert [f for _, f, _ in found] == ["spec.replicas"]  # minimum fails, the rule ran and passed
    prior = [apierrors.required("metadata.name", "name or generateName is required")]
    assert causes(schema.validate(cr(replicas=3), old=None, prior=prior))[-1][1] == "<nil>"


def test_numbers_compare_across_int_and_double_and_number_fields_are_doubles() -> None:
    schema = rules_schema({"rule": "self.ratio > 1 && self.ratio < 2.5"})
    assert schema.validate(cr(ratio=2), old=None) == []
    assert len(schema.validate(cr(ratio=3), old=None)) == 1


def test_a_rule_that_fails_to_evaluate_reports_the_cel_error() -> None:
    schema = rules_schema({"rule": "self.labels['team'] == 'gpu'"})
    assert causes(schema.validate(cr(labels={}), old=None)) == [
        (
            "FieldValueInvalid",
            "spec",
            "Invalid value: \"object\": no such key: team evaluating rule: self.labels['team'] == 'gpu'",
        )
    ]


def test_library_functions_rules_commonly_use() -> None:
    rule = (
        "self.name.startsWith('gpu-') && self.name.endsWith('x') && self.name.contains('-')"
        " && self.name.matches('^[a-z-]+$') && self.name.lowerAscii() == self.name && self.name.indexOf('-') == 3"
        " && size(self.labels) >= 0 && self.labels.all(k, k.size() > 0) && [1, 2, 3].isSorted()"
        " && self.labels.exists(k, self.labels[k] == 'v')"
    )
    schema = rules_schema({"rule": rule})
    assert schema.validate(cr(name="gpu-box", labels={"a": "v"}), old=None) == []
    assert len(schema.validate(cr(name="cpu-box", labels={"a": "v"}), old=None)) == 1


# --- ratcheting -----------------------------------------------------------------------------------------------


def test_an_unchanged_invalid_value_is_tolerated_on_update_but_a_changed_one_is_not() -> None:
    schema = compiled(
        {
            "type": "object",
            "properties": {"a": {"type": "integer", "maximum": 5}, "b": {"type": "integer", "maximum": 5}},
        }
    )
    old = {"spec": {"a": 9, "b": 1}}
    assert causes(schema.validate({"spec": {"a": 9, "b": 2}}, old=old)) == []
    assert causes(schema.validate({"spec": {"a": 8, "b": 2}}, old=old)) == [
        ("FieldValueInvalid", "spec.a", "Invalid value: 8: spec.a in body should be less than or equal to 5")
    ]
    assert len(schema.validate({"spec": {"a": 9, "b": 2}}, old=None)) == 1


def test_rule_errors_on_unchanged_values_are_tolerated_on_update() -> None:
    schema = rules_schema({"rule": "self.replicas <= 10"})
    sub = compiled(
        {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 5"}]},
                "b": {"type": "integer"},
            },
        }
    )
    assert sub.validate({"spec": {"a": 9, "b": 2}}, old={"spec": {"a": 9, "b": 1}}) == []
    assert len(sub.validate({"spec": {"a": 8, "b": 2}}, old={"spec": {"a": 9, "b": 1}})) == 1
    assert len(schema.validate(cr(replicas=11), old=cr(replicas=11))) == 0


# --- CRD refusals -----------------------------------------------------------------------------------------------


def crd(schema: dict[str, Any], **spec: Any) -> dict[str, Any]:
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [version],
            **spec,
        },
    }


def spec_schema(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": node}}


P = f"{ROOT}.properties[spec]"


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (
            {"type": "object", "properties": {"a": {}}},
            (
                f"{P}.properties[a].type",
                "FieldValueRequired",
                "Required value: must not be empty for specified object fields",
            ),
        ),
        (
            {"type": "array"},
            (f"{P}.items", "FieldValueRequired", "Required value: must be specified"),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
            (
                f"{P}.additionalProperties",
                "FieldValueForbidden",
                "Forbidden: additionalProperties and properties are mutual exclusive",
            ),
        ),
        (
            {"type": "object", "properties": {"a": {"$ref": "#/definitions/x"}}},
            (f"{P}.properties[a].$ref", "FieldValueForbidden", "Forbidden: $ref is not supported"),
        ),
        (
            {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
            (f"{P}.properties[a].anyOf[0].type", "FieldValueForbidden", "Forbidden: must be empty to be structural"),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string", "anyOf": [{"title": "A"}]}}},
            (f"{P}.properties[a].anyOf[0].title", "FieldValueForbidden", "Forbidden: must be empty to be structural"),
        ),
        (
            {"type": "integer", "minimum": 1, "default": 0},
            (f"{P}.default", "FieldValueInvalid", "Invalid value: 0:  in body should be greater than or equal to 1"),
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}},
            (f"{P}.default", "FieldValueInvalid", 'Invalid value: {"a":"x","b":1}: must not have unknown fields'),
        ),
        (
            {"type": "string", "pattern": "^(?!tmp)"},  # Go's regexp (RE2) has no lookahead
            (
                f"{P}.pattern",
                "FieldValueInvalid",
                'Invalid value: "^(?!tmp)": must be a valid regular expression, but isn\'t: error parsing regexp:'
                " invalid perl operator: (?!",
            ),
        ),
        (
            {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
            (
                f"{P}.uniqueItems",
                "FieldValueForbidden",
                "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            ),
        ),
        (
            {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() > 1", "reason": "Nope"}]},
            (
                f"{P}.x-kubernetes-validations[0].reason",
                "FieldValueNotSupported",
                'Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", '
                '"FieldValueInvalid", "FieldValueRequired"',
            ),
        ),
    ],
)
def test_non_structural_schemas_are_refused_with_the_real_paths(
    node: dict[str, Any], expected: tuple[str, str, str]
) -> None:
    found = [(e.field, e.type, e.body) for e in crd_errors(crd(spec_schema(node)), old=None)]
    assert expected in found, found


def test_root_metadata_may_only_restrict_name_and_generate_name() -> None:
    ok = {
        "type": "object",
        "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 9}}}},
    }
    assert crd_errors(crd(ok), old=None) == []
    bad = {
        "type": "object",
        "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}},
    }
    assert [e.text() for e in crd_errors(crd(bad), old=None)] == [
        f"{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but"
        " metadata is implicitly specified"
    ]


@pytest.mark.parametrize(
    ("rule", "detail"),
    [
        ("self.nope > 1", "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^"),
        (
            "other > 1",
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'other' (in container '')"
            "\n | other > 1\n | ^",
        ),
        ("self.a == ", "compilation failed: ERROR: <input>:1:"),
        ("quantity(self.a).isInteger()", "is not supported by this server's CEL engine"),
        ("self.?a.hasValue()", "optional field selection is not supported by this server's CEL engine"),
    ],
)
def test_rules_that_do_not_compile_or_cannot_be_evaluated_refuse_the_crd(rule: str, detail: str) -> None:
    node = {"type": "object", "properties": {"a": {"type": "string"}}, "x-kubernetes-validations": [{"rule": rule}]}
    found = crd_errors(crd(spec_schema(node)), old=None)
    assert len(found) == 1
    assert found[0].field == f"{P}.x-kubernetes-validations[0].rule"
    assert found[0].body.startswith(f"Invalid value: {json.dumps({'rule': rule}, separators=(',', ':'))}: ")
    assert detail in found[0].body


def test_old_self_is_refused_where_items_cannot_be_correlated() -> None:
    node = {
        "type": "array",
        "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]},
    }
    assert [e.text() for e in crd_errors(crd(spec_schema(node)), old=None)] == [
        f'{P}.items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the'
        f" uncorrelatable portion of the schema within {P}"
    ]


def test_optional_old_self_needs_a_rule_using_old_self() -> None:
    node = {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''", "optionalOldSelf": True}]}
    assert [e.text() for e in crd_errors(crd(spec_schema(node)), old=None)] == [
        f"{P}.x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used"
        " in rule"
    ]


def test_crd_level_refusals() -> None:
    assert crd_errors(crd(spec_schema({"type": "object"})), old=None) == []
    bad = crd(spec_schema({"type": "string"}), preserveUnknownFields=True)
    bad["metadata"]["name"] = "widget.example.com"
    bad["spec"]["versions"].append({**bad["spec"]["versions"][0], "name": "v2"})
    texts = [e.text() for e in crd_errors(bad, old=None)]
    assert 'metadata.name: Invalid value: "widget.example.com": must be spec.names.plural+"."+spec.group' in texts
    assert any(
        t.startswith("spec.versions: Invalid value: ")
        and t.endswith("must have exactly one version marked as storage version")
        for t in texts
    )
    assert (
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields"
        " to true in spec.versions[*].schema instead"
    ) in texts


def test_schema_errors_name_the_version_when_schemas_differ() -> None:
    doc = crd(spec_schema({"type": "object", "properties": {"a": {}}}))
    other = {
        "name": "v2",
        "served": True,
        "storage": False,
        "schema": {"openAPIV3Schema": spec_schema({"type": "object"})},
    }
    doc["spec"]["versions"].append(other)
    assert [e.field for e in crd_errors(doc, old=None)] == [
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].type"
    ]
    assert crdcheck.schema_path(doc, 1) == "spec.versions[1].schema.openAPIV3Schema"


def test_compile_raises_with_every_cause() -> None:
    with pytest.raises(SchemaError) as caught:
        StructuralSchema.compile({"type": "object", "properties": {"a": {}, "b": {"type": "array"}}}, path="root")
    assert sorted(e.field for e in caught.value.errors) == ["root.properties[a].type", "root.properties[b].items"]


def test_unknown_and_mistyped_schema_keywords_are_decode_problems() -> None:
    doc = crd({"type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0, "const": 3}}})
    unknown, error = crdcheck.decode_problems(doc)
    assert unknown == ["spec.versions[0].schema.openAPIV3Schema.properties.n.const"]
    assert error == (
        "json: cannot unmarshal number into Go struct field"
        " JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.exclusiveMinimum of type bool"
    )


def test_rows_from_a_crd_carry_the_compiled_schema() -> None:
    rows = resources.from_crd(crd(spec_schema({"type": "object", "properties": {"a": {"type": "string"}}})))
    assert [r.version for r in rows] == ["v1"]
    schema = rows[0].schema
    assert schema is not None
    obj = {"spec": {"a": "x", "b": 1}}
    assert schema.prune(obj) == ["spec.b"]
    assert rows[0] == resources.from_crd(crd(spec_schema({"type": "object"})))[0]  # the schema is not part of equality


# --- properties -------------------------------------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(["known", "list", "labels", "free", "template", "gone", "kept", "withDefault", "x", "a", "name"])
OBJECTS = st.dictionaries(KEYS, JSON | st.dictionaries(KEYS, JSON, max_size=4), max_size=6)


@settings(max_examples=150, deadline=None)
@given(spec=OBJECTS, meta=st.dictionaries(st.sampled_from(["name", "labels", "junk", "uid"]), JSON, max_size=3))
def test_prune_is_idempotent(spec: dict[str, Any], meta: dict[str, Any]) -> None:
    obj = {"apiVersion": "v", "kind": "K", "metadata": meta, "spec": spec, "status": spec}
    PRUNING.prune(obj)
    once = copy.deepcopy(obj)
    assert PRUNING.prune(obj) == []
    assert obj == once


SCHEMA_FOR_ANY = rules_schema({"rule": "!has(self.replicas) || self.replicas <= 10"})


@settings(max_examples=200, deadline=None)
@given(spec=JSON, old=st.none() | JSON)
def test_validate_never_raises_on_any_json_value(spec: Any, old: Any) -> None:
    for schema in (SCHEMA_FOR_ANY, PRUNING, DEFAULTS):
        found = schema.validate({"spec": spec}, old=None if old is None else {"spec": old})
        assert all(isinstance(e, FieldError) and e.type and e.body for e in found)


VALID_DEFAULTS = compiled(
    {
        "type": "object",
        "required": ["mode"],
        "properties": {
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
                    },
                },
            },
            "tuning": {
                "type": "object",
                "default": {},
                "properties": {"level": {"type": "integer", "default": 3, "maximum": 9}},
            },
        },
        "x-kubernetes-validations": [{"rule": "self.replicas <= 5"}],
    },
    required=["spec"],
)


@settings(max_examples=100, deadline=None)
@given(
    mode=st.none() | st.sampled_from(["a", "b"]),
    replicas=st.none() | st.integers(1, 5),
    ports=st.none() | st.lists(st.text("abc", min_size=1, max_size=3), unique=True, max_size=3),
)
def test_objects_missing_only_defaulted_fields_validate_once_defaulted(
    mode: str | None, replicas: int | None, ports: list[str] | None
) -> None:
    spec: dict[str, Any] = {}
    if mode is not None:
        spec["mode"] = mode
    if replicas is not None:
        spec["replicas"] = replicas
    if ports is not None:
        spec["ports"] = [{"name": p} for p in ports]
    obj = {"apiVersion": "e.com/v1", "kind": "W", "metadata": {"name": "w"}, "spec": spec}
    VALID_DEFAULTS.prune(obj)
    VALID_DEFAULTS.default(obj)
    assert VALID_DEFAULTS.validate(obj, old=None) == []


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_go_float_formatting_reads_back_as_the_same_number(value: float) -> None:
    assert float(go_float(value)) == value


CRD_KEYS = st.sampled_from(
    ["metadata", "name", "spec", "group", "names", "plural", "kind", "versions", "storage", "schema",
     "openAPIV3Schema", "type", "properties", "items", "anyOf", "x-kubernetes-validations", "rule", "default"]
)  # fmt: skip
CRD_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["object", "string", "self.a > 1", "v1", "x"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(CRD_KEYS, children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(
    doc=st.dictionaries(CRD_KEYS, CRD_JSON, max_size=4), old=st.none() | st.dictionaries(CRD_KEYS, CRD_JSON, max_size=3)
)
def test_crd_checks_never_raise_on_any_crd_shaped_json(doc: dict[str, Any], old: dict[str, Any] | None) -> None:
    assert all(isinstance(e, FieldError) for e in crd_errors(doc, old=old))
    crdcheck.decode_problems(doc)
