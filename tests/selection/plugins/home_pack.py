"""home_pack: a household plugin for a family or flat-share group — the smart home,
weather, travel, cooking, fitness and money. Written for the tool-selection corpus: the
handlers answer with canned text, the declarations are what a real plugin would show.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groupmate import Example, FunctionResult, MessageContext, Plugin, tool_function

plugin = Plugin("home_pack", description="Smart home, weather, travel, kitchen, fitness, money")


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


def done(what: str) -> FunctionResult:
    return FunctionResult.direct(f"✅ {what}")


def looked_up(**data: object) -> FunctionResult:
    return FunctionResult.for_model(data)


# --- smart home --------------------------------------------------------------------------


class LightsArgs(Args):
    room: str = Field(description="Room name as set up in the hub, e.g. 'kitchen', or 'all'")
    power: Literal["on", "off"] | None = Field(None, description="Switch on or off")
    brightness: int | None = Field(None, ge=1, le=100, description="Brightness in percent")
    color: str | None = Field(None, description="Colour name or warm/cold white")


@tool_function(
    description="Switch the smart lights in a room on or off, dim them or change their colour.",
    examples=["turn off the living room lights", "dim the bedroom to 30%"],
)
async def lights_set(args: LightsArgs) -> FunctionResult:
    return done(f"lights in {args.room} updated")


class ThermostatArgs(Args):
    temperature: float | None = Field(None, ge=5, le=30, description="Target in °C")
    mode: Literal["heat", "cool", "auto", "off", "eco"] | None = Field(
        None, description="Heating/cooling mode"
    )
    zone: str = Field("home", description="Heating zone, if the house has several")


@tool_function(description="Set the thermostat: target temperature or heating/cooling mode.")
async def thermostat_set(args: ThermostatArgs) -> FunctionResult:
    return done(f"thermostat {args.zone} set")


class StatusArgs(Args):
    device: str | None = Field(None, description="One device or room; all when left out")


@tool_function(
    description=(
        "Show the state of the home's devices: which lights are on, doors and windows "
        "open or closed, indoor temperature and humidity, alarm armed or not."
    ),
    effect="read",
    examples=["did anyone leave a window open?"],
)
async def home_status(args: StatusArgs) -> FunctionResult:
    return looked_up(lights_on=["hall"], windows_open=[], indoor_c=21.5)


class LockArgs(Args):
    door: str = Field("front", description="Which door: front, back, garage")
    action: Literal["lock", "unlock", "status"] = Field(description="What to do")


@tool_function(description="Lock or unlock a smart door lock, or check whether it is locked.")
async def door_lock(args: LockArgs) -> FunctionResult:
    return done(f"{args.door} door: {args.action}")


class VacuumArgs(Args):
    action: Literal["start", "stop", "dock"] = Field(description="Start, stop or send home")
    rooms: list[str] = Field(default_factory=list, description="Rooms to clean; all if empty")


@tool_function(description="Start, stop or dock the robot vacuum, optionally for some rooms.")
async def robot_vacuum(args: VacuumArgs) -> FunctionResult:
    return done(f"vacuum: {args.action}")


class SceneArgs(Args):
    scene: str = Field(description="Scene name, e.g. 'movie night', 'good night', 'away'")


@tool_function(
    description=(
        "Run a home scene that sets several devices at once (lights, blinds, heating, "
        "music), such as 'movie night', 'good night' or 'away'."
    ),
)
async def home_scene_run(args: SceneArgs) -> FunctionResult:
    return done(f"scene {args.scene!r} running")


class CameraArgs(Args):
    camera: str = Field(description="Camera name: front door, garden, garage, baby room")


@tool_function(
    description="Take a snapshot from a security camera and post it in the chat.",
    effect="read",
)
async def camera_snapshot(args: CameraArgs) -> FunctionResult:
    return FunctionResult.direct(f"📷 {args.camera}: (image)")


class IrrigationArgs(Args):
    zone: str = Field("garden", description="Irrigation zone: lawn, garden, balcony")
    minutes: int = Field(10, ge=1, le=120, description="How long to water")


@tool_function(description="Water the garden: run an irrigation zone for some minutes.")
async def garden_water(args: IrrigationArgs) -> FunctionResult:
    return done(f"watering {args.zone} for {args.minutes} min")


class EnergyArgs(Args):
    period: Literal["today", "week", "month"] = Field("month", description="Which period")
    meter: Literal["electricity", "gas", "water", "all"] = Field("all", description="Meter")


@tool_function(
    description="Household electricity, gas and water use for a period, and what it costs.",
    effect="read",
)
async def energy_usage(args: EnergyArgs) -> FunctionResult:
    return looked_up(kwh=212, cost_eur=68.4)


# --- weather -----------------------------------------------------------------------------


class PlaceArgs(Args):
    place: str | None = Field(None, description="City or address; the home's when left out")


@tool_function(
    description="Current weather at a place: temperature, feels-like, rain, wind.",
    effect="external",
    examples=["is it raining in Leeds right now?"],
)
async def weather_now(args: PlaceArgs) -> FunctionResult:
    return looked_up(temp_c=14, sky="light rain")


class ForecastArgs(Args):
    place: str | None = Field(None, description="City or address; the home's when left out")
    days: int = Field(3, ge=1, le=10, description="How many days ahead")


@tool_function(
    description="Weather forecast for the next days at a place (up to 10 days).",
    effect="external",
    examples=[
        Example("will it rain on saturday in Bristol?", {"place": "Bristol", "days": 5}),
    ],
)
async def weather_forecast(args: ForecastArgs) -> FunctionResult:
    return looked_up(days=[{"day": "Sat", "rain_mm": 3}])


@tool_function(
    description="Air quality (AQI, PM2.5) and pollen levels at a place.",
    effect="external",
)
async def air_quality(args: PlaceArgs) -> FunctionResult:
    return looked_up(aqi=42, pollen="grass: high")


class SunArgs(Args):
    place: str | None = Field(None, description="City; the home's when left out")
    date: str | None = Field(None, description="Date YYYY-MM-DD; today when left out")


@tool_function(description="Sunrise and sunset times (and daylight hours) for a place and date.")
async def sunrise_sunset(args: SunArgs) -> FunctionResult:
    return looked_up(sunrise="06:12", sunset="19:48")


# --- travel ------------------------------------------------------------------------------


class FlightArgs(Args):
    flight: str = Field(description="Flight number, e.g. BA283")
    date: str | None = Field(None, description="Departure date YYYY-MM-DD; today by default")


@tool_function(
    description="Live status of a flight by its number: delays, gate, terminal, landing time.",
    effect="external",
    examples=["is LH900 on time?"],
)
async def flight_status(args: FlightArgs) -> FunctionResult:
    return looked_up(status="delayed 25 min", gate="B12")


class FlightSearchArgs(Args):
    origin: str = Field(description="From: city or airport code")
    destination: str = Field(description="To: city or airport code")
    depart: str = Field(description="Departure date YYYY-MM-DD")
    back: str | None = Field(None, description="Return date for a round trip")
    passengers: int = Field(1, ge=1, le=9)


@tool_function(
    description="Search flights between two cities on given dates, cheapest first, with prices.",
    effect="external",
)
async def flight_search(args: FlightSearchArgs) -> FunctionResult:
    return looked_up(cheapest={"price_eur": 89, "airline": "easyJet"})


class HotelArgs(Args):
    city: str = Field(description="City or area")
    check_in: str = Field(description="YYYY-MM-DD")
    nights: int = Field(1, ge=1, le=30)
    guests: int = Field(2, ge=1, le=10)
    max_price: float | None = Field(None, description="Per night, in the chat's currency")


@tool_function(description="Find hotels and rentals in a city for given dates and guests.")
async def hotel_search(args: HotelArgs) -> FunctionResult:
    return looked_up(hotels=[{"name": "Hotel Central", "per_night": 120}])


class TrainArgs(Args):
    origin: str = Field(description="From station")
    destination: str = Field(description="To station")
    when: str | None = Field(None, description="Date and time; now when left out")


@tool_function(
    description="Train departures between two stations: times, platforms, delays, changes.",
    effect="external",
)
async def train_times(args: TrainArgs) -> FunctionResult:
    return looked_up(next=[{"dep": "17:04", "platform": 3}])


class VisaArgs(Args):
    passport: str = Field(description="Passport country")
    destination: str = Field(description="Country to visit")


@tool_function(
    description="Visa and entry requirements for a passport holder visiting a country.",
    effect="read",
)
async def visa_requirements(args: VisaArgs) -> FunctionResult:
    return looked_up(visa="not required up to 90 days")


class PackingArgs(Args):
    destination: str = Field(description="Where the trip goes")
    days: int = Field(description="Length of the trip", ge=1, le=60)
    activities: list[str] = Field(default_factory=list, description="hiking, beach, business…")


@tool_function(
    description="Make a packing list for a trip from destination, length and activities.",
    effect="read",
)
async def packing_list(args: PackingArgs) -> FunctionResult:
    return looked_up(items=["passport", "charger", "rain jacket"])


class ItineraryArgs(Args):
    trip: str = Field(description="Trip name, e.g. 'Lisbon May'")
    item: str | None = Field(None, description="What to add: a booking, a plan, an address")
    day: str | None = Field(None, description="Which day of the trip")


@tool_function(
    description=(
        "The group's shared trip itinerary: add a booking or plan to a trip, or show the "
        "trip's plan day by day when no item is given."
    ),
)
async def trip_itinerary(args: ItineraryArgs) -> FunctionResult:
    return done(f"itinerary {args.trip} updated")


class CurrencyArgs(Args):
    amount: float = Field(1, description="Amount to convert")
    source: str = Field(description="From currency code, e.g. EUR")
    target: str = Field(description="To currency code, e.g. JPY")


@tool_function(
    description="Convert an amount between currencies at today's rate.",
    effect="external",
)
async def convert_currency(args: CurrencyArgs) -> FunctionResult:
    return looked_up(result=args.amount * 1.08)


# --- kitchen -----------------------------------------------------------------------------


class RecipeArgs(Args):
    query: str = Field(description="A dish, or ingredients to use up")
    diet: str | None = Field(None, description="vegetarian, vegan, gluten-free…")
    max_minutes: int | None = Field(None, description="Total time limit")


@tool_function(
    description="Find recipes by dish name or by the ingredients at hand.",
    effect="external",
    examples=["what can I cook with eggs, spinach and feta?"],
)
async def recipe_search(args: RecipeArgs) -> FunctionResult:
    return looked_up(recipes=["Spinach and feta frittata"])


class ScaleArgs(Args):
    recipe: str = Field(description="The recipe's name or its ingredient list")
    servings: int = Field(ge=1, le=100, description="How many servings to make")


@tool_function(description="Scale a recipe's ingredient amounts to a number of servings.")
async def recipe_scale(args: ScaleArgs) -> FunctionResult:
    return looked_up(scaled=True)


class UnitArgs(Args):
    value: float = Field(description="The amount")
    unit: str = Field(description="From unit: cup, tbsp, oz, lb, °F, ml…")
    to: str = Field(description="To unit")
    ingredient: str | None = Field(None, description="For volume↔weight, e.g. flour")


@tool_function(
    description="Convert cooking and everyday units: cups to grams, °F to °C, oz to ml.",
    effect="read",
)
async def unit_convert(args: UnitArgs) -> FunctionResult:
    return looked_up(result=120)


class TimerArgs(Args):
    minutes: float = Field(gt=0, le=600, description="Length of the timer")
    label: str = Field("timer", description="What it is for, e.g. 'pasta'")


@tool_function(
    description="Start a kitchen timer on the home's smart speaker, which rings when it ends.",
)
async def kitchen_timer(args: TimerArgs) -> FunctionResult:
    return done(f"{args.label}: {args.minutes:g} min")


class MealPlanArgs(Args):
    days: int = Field(7, ge=1, le=14)
    people: int = Field(2, ge=1, le=12)
    preferences: str | None = Field(None, description="Diet, dislikes, budget")


@tool_function(description="Plan the week's dinners for the household (and what to buy).")
async def meal_plan(args: MealPlanArgs) -> FunctionResult:
    return looked_up(plan=["Mon: curry", "Tue: tacos"])


class ShoppingAddArgs(Args):
    items: list[str] = Field(min_length=1, description="Things to buy")


@tool_function(
    description="Add items to the household's shared shopping list.",
    examples=["add milk and eggs to the list"],
)
async def shopping_list_add(args: ShoppingAddArgs) -> FunctionResult:
    return done(f"added {', '.join(args.items)}")


@tool_function(description="Show the household's shopping list.", effect="read")
async def shopping_list_show() -> FunctionResult:
    return looked_up(items=["milk", "eggs"])


class ShoppingDoneArgs(Args):
    items: list[str] = Field(min_length=1, description="Things bought or no longer needed")


@tool_function(description="Tick items off the shopping list (bought or not needed).")
async def shopping_list_remove(args: ShoppingDoneArgs) -> FunctionResult:
    return done(f"ticked off {', '.join(args.items)}")


class FoodArgs(Args):
    food: str = Field(description="A food or dish with an amount, e.g. '2 eggs'")


@tool_function(
    description="Calories, protein, carbs and fat of a food or dish.",
    effect="read",
)
async def nutrition_facts(args: FoodArgs) -> FunctionResult:
    return looked_up(kcal=155, protein_g=13)


# --- fitness -----------------------------------------------------------------------------


class WorkoutArgs(Args):
    activity: str = Field(description="run, gym, yoga, swim, cycling…")
    minutes: int | None = Field(None, ge=1)
    distance_km: float | None = Field(None, ge=0)
    note: str | None = None


@tool_function(
    description="Log a workout for the sender (activity, duration, distance).",
    examples=["log a 5k run, 28 minutes"],
)
async def workout_log(ctx: MessageContext, args: WorkoutArgs) -> FunctionResult:
    return done(f"{ctx.sender_name}: {args.activity} logged")


class StatsArgs(Args):
    period: Literal["week", "month", "year"] = "week"
    member: str | None = Field(None, description="Whose stats; the sender's by default")


@tool_function(
    description="Workout stats and streaks for a member, or the group's leaderboard.",
    effect="read",
)
async def workout_stats(args: StatsArgs) -> FunctionResult:
    return looked_up(runs=3, km=21.4, streak_days=5)


@tool_function(description="Today's step count from the sender's fitness tracker.", effect="read")
async def step_count(ctx: MessageContext) -> FunctionResult:
    return looked_up(steps=8432)


class PlanArgs(Args):
    goal: str = Field(description="e.g. 'first 10k', 'lose 5 kg', 'stronger back'")
    days_per_week: int = Field(3, ge=1, le=7)
    equipment: str | None = Field(None, description="none, dumbbells, full gym")


@tool_function(description="Suggest a workout routine for a goal, with days and exercises.")
async def workout_plan(args: PlanArgs) -> FunctionResult:
    return looked_up(plan=["Mon: easy run", "Wed: intervals"])


class WaterArgs(Args):
    ml: int = Field(250, ge=50, le=3000, description="How much water")


@tool_function(description="Log water the sender drank and show today's total.")
async def water_intake_log(args: WaterArgs) -> FunctionResult:
    return done(f"+{args.ml} ml")


@tool_function(
    description="Last night's sleep from the tracker: duration, phases, sleep score.",
    effect="read",
)
async def sleep_report(ctx: MessageContext) -> FunctionResult:
    return looked_up(hours=6.8, score=74)


class WeightArgs(Args):
    kg: float = Field(gt=20, lt=400, description="Body weight in kg")


@tool_function(description="Log the sender's body weight and show the trend.")
async def weight_log(args: WeightArgs) -> FunctionResult:
    return done(f"{args.kg} kg logged")


# --- money -------------------------------------------------------------------------------


class ExpenseArgs(Args):
    amount: float = Field(gt=0)
    what: str = Field(description="What it was for")
    paid_by: str | None = Field(None, description="Who paid; the sender by default")
    split_with: list[str] = Field(default_factory=list, description="Who shares; all if empty")


@tool_function(
    description="Record a shared expense (who paid, how much, who shares it) for splitting later.",
    examples=["I paid 64.20 for groceries, split with Tom and Mia"],
)
async def expense_add(args: ExpenseArgs) -> FunctionResult:
    return done(f"{args.what}: {args.amount:.2f}")


@tool_function(
    description="Who owes whom in the group from the shared expenses, and how to settle up.",
    effect="read",
)
async def settle_up() -> FunctionResult:
    return looked_up(transfers=[{"from": "Tom", "to": "Mia", "amount": 23.5}])


class SpendingArgs(Args):
    category: str | None = Field(None, description="groceries, eating out, transport…")
    limit: float | None = Field(None, gt=0, description="New monthly limit for the category")


@tool_function(
    description=(
        "The household's monthly spending budget: spent so far per category against its "
        "limit; with a limit, sets a new one for the category."
    ),
)
async def spending_budget(args: SpendingArgs) -> FunctionResult:
    return looked_up(groceries={"spent": 312, "limit": 450})


class StockArgs(Args):
    symbol: str = Field(description="Ticker symbol, e.g. AAPL, or a company name")


@tool_function(
    description="Stock or ETF price now, with today's change.",
    effect="external",
    examples=["how's NVDA doing today"],
)
async def stock_quote(args: StockArgs) -> FunctionResult:
    return looked_up(price=131.2, change_pct=-1.4)


class BillsArgs(Args):
    days: int = Field(30, ge=1, le=90, description="How far ahead")


@tool_function(
    description="Upcoming household bills (rent, utilities, insurance) with due dates.",
    effect="read",
)
async def bills_due(args: BillsArgs) -> FunctionResult:
    return looked_up(bills=[{"what": "rent", "due": "2026-03-01", "amount": 1450}])


@tool_function(
    description="List the household's recurring subscriptions and what they cost a month.",
    effect="read",
)
async def subscriptions() -> FunctionResult:
    return looked_up(subscriptions=[{"name": "Netflix", "monthly": 13.99}])


class LoanArgs(Args):
    principal: float = Field(gt=0, description="Amount borrowed")
    rate_percent: float = Field(ge=0, le=50, description="Yearly interest rate")
    years: int = Field(ge=1, le=40)


@tool_function(
    description="Loan or mortgage calculator: monthly payment and total interest.",
    effect="read",
)
async def loan_calculator(args: LoanArgs) -> FunctionResult:
    return looked_up(monthly=1288.0)


class SavingsArgs(Args):
    goal: str = Field(description="Goal name, e.g. 'holiday fund'")
    add: float | None = Field(None, description="Amount put aside now")


@tool_function(description="Track a savings goal: add money to it or show how close it is.")
async def savings_goal(args: SavingsArgs) -> FunctionResult:
    return looked_up(saved=1200, target=3000)


# --- household -----------------------------------------------------------------------------


class ChoreArgs(Args):
    chore: str | None = Field(None, description="dishes, bins, bathroom…; all when left out")
    assign_to: str | None = Field(None, description="Give the chore to this member")


@tool_function(
    description="The flat's chore rota: whose turn it is for each chore, or reassign one.",
    examples=["whose turn is it to do the bathroom?"],
)
async def chore_rota(args: ChoreArgs) -> FunctionResult:
    return looked_up(dishes="Sam", bins="Ali")


@tool_function(
    description="Which bins are collected this week and on what day (recycling, garden, general).",
    effect="read",
)
async def bin_collection() -> FunctionResult:
    return looked_up(day="Thursday", bins=["recycling"])


class PetArgs(Args):
    pet: str = Field("the cat", description="Which pet")
    fed: bool = Field(False, description="True to log a feeding now; false to ask")


@tool_function(description="Log that the pet was fed, or check when it was last fed and by whom.")
async def pet_feeding(args: PetArgs) -> FunctionResult:
    return looked_up(last_fed="07:40 by Mia")


class MovieArgs(Args):
    title: str | None = Field(None, description="A film; what is on when left out")
    cinema: str | None = None
    date: str | None = None


@tool_function(
    description="Cinema showtimes near home for a film or a date.",
    effect="external",
)
async def movie_showtimes(args: MovieArgs) -> FunctionResult:
    return looked_up(showings=["18:30", "21:00"])
