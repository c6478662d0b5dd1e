#!/usr/bin/env python3
"""Drives `statebus inspect`'s page in a real browser (headless Chromium through Selenium),
as a person would, against a running host serving the demo's Profile object. Run by
Tests/IntegrationTests/InspectorBrowserTests.swift, which starts the host and the inspector.

    inspector_check.py URL CONTROL STATEBUS [SCREENSHOT.png]
    inspector_check.py --scrub URL SEQUENCE:PROPERTY=TEXT,... ...

With --scrub the page shows a recording (statebus inspect --recording): for each argument,
in order, the slider moves to SEQUENCE and every PROPERTY of the recorded object must show
TEXT (the page's text of its value).

Prints one `ok: ...` line per step and exits 0, or prints what it saw and exits 1.
"""
import json
import subprocess
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

scrub = sys.argv[1] == "--scrub"
if scrub:
    url, stops = sys.argv[2], sys.argv[3:]
else:
    url, control, statebus = sys.argv[1:4]
    screenshot = sys.argv[4] if len(sys.argv) > 4 else None


def run(*arguments):
    done = subprocess.run([statebus, *arguments, "--control", control, "--object", "Profile"], capture_output=True, text=True, timeout=60)
    return done.returncode, (done.stdout + done.stderr).strip()


def fail(what, driver):
    print(f"FAILED: {what}")
    print("page text:", driver.find_element(By.TAG_NAME, "body").text[:2000])
    sys.exit(1)


options = webdriver.ChromeOptions()
for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,760"):
    options.add_argument(argument)
options.binary_location = "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
wait = WebDriverWait(driver, 30, poll_frequency=0.1)


def scrub_through(stops):
    """Moves the recording's slider to each stop and checks the values shown there."""
    driver.get(url)
    try:
        wait.until(lambda d: d.find_element(By.ID, "timeline").is_displayed())
    except TimeoutException:
        fail("the page shows no recording slider", driver)
    for stop in stops:
        sequence, expectations = stop.split(":", 1)
        index = driver.execute_script(f"return sequences.indexOf({int(sequence)})")
        if index < 0:
            fail(f"sequence {sequence} is not among the recorded ones", driver)
        driver.execute_script(
            "const s = document.getElementById('scrub'); s.value = String(arguments[0]); s.dispatchEvent(new Event('change'));", index)
        try:
            wait.until(lambda d: d.find_element(By.ID, "seekNote").get_attribute("data-at") == sequence)
        except TimeoutException:
            fail(f"the slider never reached sequence {sequence}", driver)
        for expectation in expectations.split(","):
            name, text = expectation.split("=", 1)
            try:
                wait.until(lambda d: d.find_element(By.ID, f"value-{name}").text == text)
            except TimeoutException:
                shown = driver.find_element(By.ID, f"value-{name}").text
                fail(f"at sequence {sequence}, {name} shows {shown!r}, not {text!r}", driver)
        print(f"ok: at sequence {sequence} the page shows {expectations}")


try:
    if scrub:
        scrub_through(stops)
        sys.exit(0)

    # 1. A value set with `statebus set` shows on the page.
    status, output = run("set", "user", json.dumps({"username": "bea", "email": "bea@example.org"}))
    if status != 0:
        fail(f"statebus set failed: {output}", driver)
    driver.get(url)
    field = "edit-Profile.user"
    try:
        wait.until(lambda d: "bea@example.org" in d.find_element(By.ID, field).get_attribute("value"))
    except TimeoutException:
        fail("the page never showed the value set with statebus set", driver)
    print("ok: the page shows the value set with statebus set")

    # 2. A value typed in the page reaches the host and another view.
    box = driver.find_element(By.ID, field)
    box.clear()
    box.send_keys(json.dumps({"username": "cy", "email": "cy@example.org"}, separators=(",", ":")) + Keys.ENTER)
    try:
        wait.until(lambda d: d.find_element(By.ID, "verdict-Profile.user").text.startswith("✓"))
    except TimeoutException:
        fail("no acceptance shown for a valid edit", driver)
    # The verdict is the host's acceptance: the host applied the edit before answering, so a
    # view that joins now takes it with its snapshot.
    status, output = run("get", "user.email")
    if status != 0 or output.splitlines()[-1] != '"cy@example.org"':
        fail(f"another view did not see the page's accepted edit: {output}", driver)
    print("ok: an edit typed in the page reaches the host and another view (statebus get)")

    # 3. An invalid value shows the host's reason and rolls back.
    box = driver.find_element(By.ID, field)
    box.clear()
    box.send_keys(json.dumps({"username": "cy", "email": "nope"}, separators=(",", ":")) + Keys.ENTER)
    try:
        wait.until(lambda d: "rejected" in d.find_element(By.ID, "verdict-Profile.user").text)
    except TimeoutException:
        fail("no rejection shown for an invalid email", driver)
    reason = driver.find_element(By.ID, "verdict-Profile.user").text
    if "is not a valid email address" not in reason:
        fail(f"the rejection does not give the host's reason: {reason}", driver)
    try:
        wait.until(lambda d: "cy@example.org" in d.find_element(By.ID, field).get_attribute("value"))
    except TimeoutException:
        fail("the field did not roll back to the host's value", driver)
    status, output = run("get", "user.email")
    if output.splitlines()[-1] != '"cy@example.org"':
        fail(f"the host changed after a rejected edit: {output}", driver)
    print("ok: an invalid edit shows the host's reason and the field rolls back")

    # The connected views panel lists at least the inspector's own replica.
    try:
        wait.until(lambda d: "statebus-inspect" in d.find_element(By.ID, "views").text)
    except TimeoutException:
        fail("the connected views never listed the inspector itself", driver)
    print("ok: the connected views list the inspector's replica")
    if screenshot:
        # For the README's picture: let the charts gather a few seconds first.
        WebDriverWait(driver, 60, poll_frequency=0.2).until(lambda d: d.execute_script("return series.ups.length") >= 8)
        driver.save_screenshot(screenshot)
        print(f"ok: screenshot {screenshot}")
finally:
    driver.quit()
